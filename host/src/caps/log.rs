//! `toolhost:tool/log` and the call's trace buffer.
//!
//! A tool's log lines, and the host's notes about the call (refused requests,
//! limits hit), go into one bounded buffer that ends up in the call's
//! `action.result` trace event. A surface that can show the tool's lines
//! while the call runs (MCP's `notifications/message`) passes a
//! [`CallWatcher`] in the call's options.

use std::sync::{Arc, Mutex, PoisonError};

use wasmtime::component::HasSelf;

use super::CallWatcher;
use crate::bindings::toolhost::tool::log::{Host, Level};
use crate::bindings::v0_1::toolhost::tool::log as v0_1;

/// The most log lines one call keeps; later lines are counted, not kept.
pub const MAX_LOG_LINES: usize = 1000;
/// The longest log line kept, in bytes; longer lines are cut.
pub const MAX_LOG_LINE_BYTES: usize = 4096;

pub use crate::envelope::LogLine;

#[derive(Debug, Default)]
struct Buffer {
    lines: Vec<LogLine>,
    dropped: usize,
}

/// A call's shared, bounded trace buffer. Cloning shares it.
#[derive(Clone, Default)]
pub struct TraceLog {
    buffer: Arc<Mutex<Buffer>>,
    watcher: Option<Arc<dyn CallWatcher>>,
}

impl std::fmt::Debug for TraceLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceLog")
            .field("buffer", &self.buffer)
            .field("watched", &self.watcher.is_some())
            .finish()
    }
}

impl TraceLog {
    /// A buffer whose tool lines `watcher`, if any, also sees.
    pub fn watched(watcher: Option<Arc<dyn CallWatcher>>) -> Self {
        Self {
            watcher,
            ..Self::default()
        }
    }

    /// Add a line from the host about this call.
    pub fn host(&self, message: impl Into<String>) {
        self.push("host", message.into(), false);
    }

    /// The lines kept and how many were dropped past the cap.
    pub fn snapshot(&self) -> (Vec<LogLine>, usize) {
        let buffer = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        (buffer.lines.clone(), buffer.dropped)
    }

    /// Keep a line unless the buffer is full, and show a tool's kept line
    /// to the watcher (outside the lock).
    fn push(&self, level: &'static str, mut message: String, from_tool: bool) {
        cut(&mut message, MAX_LOG_LINE_BYTES);
        let line = LogLine { level, message };
        let watcher = self.watcher.as_ref().filter(|_| from_tool);
        let seen = watcher.map(|_| line.clone());
        {
            let mut buffer = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
            if buffer.lines.len() >= MAX_LOG_LINES {
                buffer.dropped += 1;
                return;
            }
            buffer.lines.push(line);
        }
        if let (Some(watcher), Some(line)) = (watcher, seen) {
            watcher.log(&line);
        }
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
        self.push(level, message, true);
    }
}

/// Cut `text` to at most `max` bytes on a character boundary, marking the
/// cut with `…`: how the trace keeps a tool's long text.
pub(crate) fn cut(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        // A new string, not `truncate`: that keeps the whole allocation,
        // which can be as large as a host call's input.
        let mut kept = String::with_capacity(end + '…'.len_utf8());
        kept.push_str(&text[..end]);
        kept.push('…');
        *text = kept;
    }
}

/// Contract 0.1.0's `log`, the same interface.
impl v0_1::Host for TraceLog {
    fn log(&mut self, level: v0_1::Level, message: String) {
        let level = match level {
            v0_1::Level::Debug => Level::Debug,
            v0_1::Level::Info => Level::Info,
            v0_1::Level::Warn => Level::Warn,
            v0_1::Level::Error => Level::Error,
        };
        Host::log(self, level, message);
    }
}

/// Link `toolhost:tool/log`, of every contract version, into a linker whose
/// store data holds a [`TraceLog`].
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut TraceLog,
) -> wasmtime::Result<()> {
    crate::bindings::toolhost::tool::log::add_to_linker::<T, HasSelf<TraceLog>>(linker, get)?;
    v0_1::add_to_linker::<T, HasSelf<TraceLog>>(linker, get)
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

    #[test]
    fn a_cut_line_keeps_only_what_it_shows() {
        let mut text = "x".repeat(8 << 20);
        cut(&mut text, MAX_LOG_LINE_BYTES);
        assert!(
            text.capacity() <= MAX_LOG_LINE_BYTES + '…'.len_utf8(),
            "a cut line holds {} bytes",
            text.capacity()
        );
    }

    #[test]
    fn the_watcher_sees_each_kept_tool_line_and_no_host_note() {
        #[derive(Default)]
        struct Seen(Mutex<Vec<LogLine>>);
        impl CallWatcher for Seen {
            fn log(&self, line: &LogLine) {
                self.0.lock().unwrap().push(line.clone());
            }
        }
        let seen = Arc::new(Seen::default());
        let mut log = TraceLog::watched(Some(seen.clone()));
        log.host("a host note");
        Host::log(&mut log, Level::Warn, "x".repeat(MAX_LOG_LINE_BYTES + 10));
        for i in 0..MAX_LOG_LINES {
            Host::log(&mut log, Level::Debug, format!("line {i}"));
        }
        let seen = seen.0.lock().unwrap();
        assert_eq!(
            seen.len(),
            MAX_LOG_LINES - 1,
            "only kept lines, no host note"
        );
        assert_eq!(seen[0].level, "warn");
        assert!(seen[0].message.ends_with('…'), "cut as kept");
        assert_eq!(seen[1].message, "line 0");
        assert_eq!(log.snapshot().1, 2, "the two past the cap were dropped");
    }
}
