//! What a running call tells the MCP client before its result: the tool's
//! log lines as `notifications/message` (with the tool's name as the
//! logger, filtered by the level the client set with `logging/setLevel` or,
//! from 2026-07-28, named in the request's `_meta`), and, when the
//! client sent a progress token, progress notifications: the tool's own
//! reports (`toolhost:tool/progress`), else a heartbeat every second.
//!
//! One task per call, started by its first note (most calls send none),
//! sends them in the order they came, each progress value above the last
//! one sent (a tool's report that is not is dropped, and once a tool
//! reports, the heartbeat stops); the call's result waits until they are
//! sent (up to [`FLUSH_WAIT`]). Over streamable HTTP, rmcp sends progress
//! on the call's own stream, and log lines on the session's standalone (GET)
//! stream up to 2025-11-25 and on the call's own stream from 2026-07-28.
#![expect(
    deprecated,
    reason = "rmcp 3.11 marks logging deprecated (SEP-2577); 2026-07-28 keeps \
              notifications/message for requests that name a level"
)]

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    JsonObject, LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
    ProgressToken, ServerCapabilities,
};
use rmcp::service::Peer;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolhost::caps::log::MAX_LOG_LINES;
use toolhost::caps::progress::MAX_PROGRESS_REPORTS;
use toolhost::{CallWatcher, LogLine, Progress};

/// The level a client gets lines at until it sets one.
pub const DEFAULT_LEVEL: LoggingLevel = LoggingLevel::Info;

/// How long a finished call's result waits for its last notes to be sent.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// Heartbeats a call may have queued besides its lines and reports.
const HEARTBEATS_QUEUED: usize = 16;

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

/// A rank above every level's: no line is wanted.
const SILENT: u8 = LEVELS.len() as u8;

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
    /// The level of one 2026-07-28 request: the one its `_meta` names
    /// (`io.modelcontextprotocol/logLevel`), or no lines at all.
    pub fn of_request(level: Option<LoggingLevel>) -> Self {
        let least = level.map_or(SILENT, rank);
        Self(Arc::new(AtomicU8::new(least)))
    }

    /// The client asked for lines at `level` and above.
    pub fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }

    fn wants(&self, level: LoggingLevel) -> bool {
        rank(level) >= self.0.load(Ordering::Relaxed)
    }
}

/// One note for the client: a heartbeat is a progress report with no total.
enum Note {
    Log(LogLine),
    Progress(Progress),
}

/// The call's side: the [`CallWatcher`] its capabilities report to.
struct Notes {
    forwarder: Mutex<Forwarder>,
    level: ClientLevel,
    wants_progress: bool,
    tool_reports: AtomicBool,
}

/// Where one call's notes go.
enum Forwarder {
    /// No note yet: nothing started.
    Idle(Recipient),
    /// The task sending them to the client, fed by `sender`.
    Sending {
        sender: mpsc::Sender<Note>,
        task: JoinHandle<()>,
    },
    /// The call is over: later notes are dropped.
    Finished,
}

impl Forwarder {
    /// The queue to the sending task, started on first use; `None` once
    /// the call is over.
    fn queue(&mut self) -> Option<&mpsc::Sender<Note>> {
        *self = match std::mem::replace(self, Self::Finished) {
            Self::Idle(recipient) => recipient.start_sending(),
            other => other,
        };
        match self {
            Self::Sending { sender, .. } => Some(sender),
            _ => None,
        }
    }
}

/// The client one call's notes are for.
struct Recipient {
    peer: Peer<RoleServer>,
    /// The tool's name, the logger of its lines.
    logger: String,
    progress: Option<ProgressToken>,
}

impl Recipient {
    /// The task sending notes to the client, in the order they are queued.
    fn start_sending(self) -> Forwarder {
        let Self {
            peer,
            logger,
            progress,
        } = self;
        // A call keeps at most MAX_LOG_LINES lines and MAX_PROGRESS_REPORTS
        // reports, so this queue holds no more than the call's trace does.
        let (sender, mut notes) =
            mpsc::channel::<Note>(MAX_LOG_LINES + MAX_PROGRESS_REPORTS + HEARTBEATS_QUEUED);
        let task = tokio::spawn(async move {
            let mut last_sent: Option<f64> = None;
            while let Some(note) = notes.recv().await {
                if let Note::Progress(report) = &note {
                    if last_sent.is_some_and(|last| report.progress <= last) {
                        continue;
                    }
                    last_sent = Some(report.progress);
                }
                let sent = match (note, progress.clone()) {
                    (Note::Log(line), _) => {
                        let note = LoggingMessageNotificationParam::new(
                            mcp_level(line.level),
                            Value::String(line.message),
                        )
                        .with_logger(logger.clone());
                        peer.notify_logging_message(note).await
                    }
                    (Note::Progress(report), Some(token)) => {
                        let mut note = ProgressNotificationParam::new(token, report.progress);
                        if let Some(total) = report.total {
                            note = note.with_total(total);
                        }
                        if let Some(message) = report.message {
                            note = note.with_message(message);
                        }
                        peer.notify_progress(note).await
                    }
                    (_, None) => continue,
                };
                if sent.is_err() {
                    break;
                }
            }
        });
        Forwarder::Sending { sender, task }
    }
}

impl Notes {
    fn send(&self, note: Note) {
        let mut forwarder = self
            .forwarder
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(queue) = forwarder.queue() {
            // Full only when the client reads slower than the caps allow a
            // call to report: the note is dropped, the trace keeps it.
            let _ = queue.try_send(note);
        }
    }
}

impl CallWatcher for Notes {
    fn log(&self, line: &LogLine) {
        if self.level.wants(mcp_level(line.level)) {
            self.send(Note::Log(line.clone()));
        }
    }

    fn progress(&self, report: &Progress) {
        if self.wants_progress {
            self.tool_reports.store(true, Ordering::Relaxed);
            self.send(Note::Progress(report.clone()));
        }
    }
}

/// What one call sends its client.
pub struct CallNotes {
    notes: Arc<Notes>,
}

impl CallNotes {
    /// Notes for a call of `tool` on `peer`'s connection; progress goes out
    /// only when the client sent `progress`, a token.
    pub fn start(
        tool: &str,
        level: ClientLevel,
        progress: Option<ProgressToken>,
        peer: Peer<RoleServer>,
    ) -> Self {
        let wants_progress = progress.is_some();
        Self {
            notes: Arc::new(Notes {
                forwarder: Mutex::new(Forwarder::Idle(Recipient {
                    peer,
                    logger: tool.to_string(),
                    progress,
                })),
                level,
                wants_progress,
                tool_reports: AtomicBool::new(false),
            }),
        }
    }

    /// The watcher to put in the call's options.
    pub fn watcher(&self) -> Arc<dyn CallWatcher> {
        self.notes.clone()
    }

    /// Another second has passed: a heartbeat, unless the tool reports its
    /// own progress or the client asked for none.
    pub fn heartbeat(&self, seconds: f64, message: String) {
        if self.notes.wants_progress && !self.notes.tool_reports.load(Ordering::Relaxed) {
            self.notes.send(Note::Progress(Progress {
                progress: seconds,
                total: None,
                message: Some(message),
            }));
        }
    }

    /// The call is over: send what is queued, then stop.
    pub async fn finish(self) {
        let forwarder = std::mem::replace(
            &mut *self
                .notes
                .forwarder
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
            Forwarder::Finished,
        );
        if let Forwarder::Sending { sender, task } = forwarder {
            drop(sender);
            let _ = tokio::time::timeout(FLUSH_WAIT, task).await;
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

    #[test]
    fn a_request_without_a_level_gets_no_lines() {
        let silent = ClientLevel::of_request(None);
        for tool_level in ["debug", "info", "warn", "error"] {
            assert!(!silent.wants(mcp_level(tool_level)), "{tool_level}");
        }
        let warning = ClientLevel::of_request(Some(LoggingLevel::Warning));
        assert!(!warning.wants(mcp_level("info")));
        assert!(warning.wants(mcp_level("warn")));
    }
}
