//! MCP logging: each client's `logging/setLevel`, and a tool's log lines
//! (`toolhost:tool/log`) sent to the client as `notifications/message` while
//! its call runs, with the tool's name as the logger.
//!
//! Lines reach the client in the order the tool logged them, and all of a
//! call's lines are sent before its result (up to [`FLUSH_WAIT`]). Over
//! streamable HTTP rmcp sends them on the session's standalone stream (the
//! GET one), as it does every notification not tied to a progress token.
#![expect(
    deprecated,
    reason = "rmcp 3.11 marks logging deprecated for the 2026-07-28 protocol (SEP-2577); \
              this server speaks 2025-11-25, where it is current"
)]

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{JsonObject, LoggingLevel, LoggingMessageNotificationParam, ServerCapabilities};
use rmcp::service::Peer;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolhost::caps::log::MAX_LOG_LINES;
use toolhost::{LogLine, LogWatcher};

/// The level a client gets lines at until it sets one.
pub const DEFAULT_LEVEL: LoggingLevel = LoggingLevel::Info;

/// How long a finished call's result waits for its last lines to be sent.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// `capabilities` with `logging` declared.
pub fn declared(mut capabilities: ServerCapabilities) -> ServerCapabilities {
    capabilities.logging = Some(JsonObject::default());
    capabilities
}

/// The levels in MCP's order (RFC 5424's severities, least first).
const LEVELS: [LoggingLevel; 8] = [
    LoggingLevel::Debug,
    LoggingLevel::Info,
    LoggingLevel::Notice,
    LoggingLevel::Warning,
    LoggingLevel::Error,
    LoggingLevel::Critical,
    LoggingLevel::Alert,
    LoggingLevel::Emergency,
];

fn rank(level: LoggingLevel) -> u8 {
    LEVELS
        .iter()
        .position(|l| *l == level)
        .and_then(|i| u8::try_from(i).ok())
        .unwrap_or(0)
}

/// A tool's level (`debug`, `info`, `warn`, `error`) as MCP names it.
fn mcp_level(level: &str) -> LoggingLevel {
    match level {
        "debug" => LoggingLevel::Debug,
        "warn" => LoggingLevel::Warning,
        "error" => LoggingLevel::Error,
        _ => LoggingLevel::Info,
    }
}

/// The least severe level one client wants; it may change mid-call.
#[derive(Clone)]
pub struct ClientLevel(Arc<AtomicU8>);

impl Default for ClientLevel {
    fn default() -> Self {
        Self(Arc::new(AtomicU8::new(rank(DEFAULT_LEVEL))))
    }
}

impl ClientLevel {
    /// The client asked for lines at `level` and above.
    pub fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }

    fn wants(&self, level: LoggingLevel) -> bool {
        rank(level) >= self.0.load(Ordering::Relaxed)
    }
}

/// Sends one call's log lines to the client: the call's [`LogWatcher`] on
/// one side, a task writing notifications on the other.
pub struct LogForwarder {
    sender: Mutex<Option<mpsc::Sender<LogLine>>>,
    level: ClientLevel,
}

/// The sending side of a [`LogForwarder`]; [`Sending::finish`] waits for it.
pub struct Sending {
    forwarder: Arc<LogForwarder>,
    task: JoinHandle<()>,
}

/// A forwarder for a call of `tool` on `peer`'s connection.
pub fn forward(tool: &str, level: ClientLevel, peer: Peer<RoleServer>) -> Sending {
    // A call keeps at most MAX_LOG_LINES lines, so this queue never holds
    // more than the call's trace already does.
    let (sender, mut lines) = mpsc::channel::<LogLine>(MAX_LOG_LINES);
    let logger = tool.to_string();
    let task = tokio::spawn(async move {
        while let Some(line) = lines.recv().await {
            let note = LoggingMessageNotificationParam::new(
                mcp_level(line.level),
                Value::String(line.message),
            )
            .with_logger(logger.clone());
            if peer.notify_logging_message(note).await.is_err() {
                break;
            }
        }
    });
    Sending {
        forwarder: Arc::new(LogForwarder {
            sender: Mutex::new(Some(sender)),
            level,
        }),
        task,
    }
}

impl Sending {
    /// The watcher to put in the call's options.
    pub fn watcher(&self) -> Arc<dyn LogWatcher> {
        self.forwarder.clone()
    }

    /// The call is over: send what is queued, then stop.
    pub async fn finish(self) {
        self.forwarder
            .sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let _ = tokio::time::timeout(FLUSH_WAIT, self.task).await;
    }
}

impl LogWatcher for LogForwarder {
    fn line(&self, line: &LogLine) {
        if !self.level.wants(mcp_level(line.level)) {
            return;
        }
        if let Some(sender) = &*self.sender.lock().unwrap_or_else(PoisonError::into_inner) {
            let _ = sender.try_send(line.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_gets_its_level_and_above() {
        let level = ClientLevel::default();
        assert!(!level.wants(mcp_level("debug")));
        assert!(level.wants(mcp_level("info")));
        level.set(LoggingLevel::Warning);
        assert!(!level.wants(mcp_level("info")));
        assert!(level.wants(mcp_level("warn")) && level.wants(mcp_level("error")));
        level.set(LoggingLevel::Debug);
        assert!(level.wants(mcp_level("debug")));
        level.set(LoggingLevel::Emergency);
        assert!(!level.wants(mcp_level("error")));
    }
}
