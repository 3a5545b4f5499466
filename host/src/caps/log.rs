//! `toolhost:tool/log` and the call's trace buffer.
//!
//! A tool's log lines, and the host's notes about the call (refused requests,
//! limits hit), go into one bounded buffer that ends up in the call's
//! `action.result` trace event.

use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::bindings::toolhost::tool::log::{Host, Level};

/// The most log lines one call keeps; later lines are counted, not kept.
pub const MAX_LOG_LINES: usize = 1000;
/// The longest log line kept, in bytes; longer lines are cut.
pub const MAX_LOG_LINE_BYTES: usize = 4096;

/// One line of a call's trace.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LogLine {
    /// `debug`, `info`, `warn` or `error`; `host` for the host's own notes.
    pub level: &'static str,
    /// The text.
    pub message: String,
}

#[derive(Debug, Default)]
struct Buffer {
    lines: Vec<LogLine>,
    dropped: usize,
}

/// A call's shared, bounded trace buffer. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct TraceLog {
    buffer: Arc<Mutex<Buffer>>,
}

impl TraceLog {
    /// Add a line from the host about this call.
    pub fn host(&self, message: impl Into<String>) {
        self.push("host", message.into());
    }

    /// The lines kept and how many were dropped past the cap.
    pub fn snapshot(&self) -> (Vec<LogLine>, usize) {
        let buffer = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        (buffer.lines.clone(), buffer.dropped)
    }

    fn push(&self, level: &'static str, mut message: String) {
        let mut buffer = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        if buffer.lines.len() >= MAX_LOG_LINES {
            buffer.dropped += 1;
            return;
        }
        if message.len() > MAX_LOG_LINE_BYTES {
            let mut end = MAX_LOG_LINE_BYTES;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push('…');
        }
        buffer.lines.push(LogLine { level, message });
    }
}

impl Host for TraceLog {
    fn log(&mut self, level: Level, message: String) {
        let level = match level {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        self.push(level, message);
    }
}

/// Link `toolhost:tool/log` into a linker whose store data holds a [`TraceLog`].
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut TraceLog,
) -> wasmtime::Result<()> {
    crate::bindings::toolhost::tool::log::add_to_linker::<T, wasmtime::component::HasSelf<TraceLog>>(
        linker, get,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_capped_and_counted() {
        let mut log = TraceLog::default();
        for i in 0..MAX_LOG_LINES + 5 {
            Host::log(&mut log, Level::Info, format!("line {i}"));
        }
        let (lines, dropped) = log.snapshot();
        assert_eq!(lines.len(), MAX_LOG_LINES);
        assert_eq!(dropped, 5);
        assert_eq!(lines[0].level, "info");
    }

    #[test]
    fn long_lines_are_cut_on_a_char_boundary() {
        let log = TraceLog::default();
        log.host("é".repeat(MAX_LOG_LINE_BYTES));
        let (lines, _) = log.snapshot();
        assert!(lines[0].message.len() <= MAX_LOG_LINE_BYTES + '…'.len_utf8());
        assert!(lines[0].message.ends_with('…'));
    }
}
