//! Sessions: identity, workspace, `asOf`, the write slot, and the event trace.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, FixedOffset, Utc};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{MutexGuard, broadcast};

use crate::call::CallResult;
use crate::error::CallError;

/// How many events a session keeps for replay.
pub const MAX_EVENTS: usize = 10_000;

/// Whether a session's calls take effect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionMode {
    /// Calls run for real.
    #[default]
    Live,
    /// Reads run; idempotent and write calls are stubbed.
    DryRun,
}

/// What a new session is made from.
#[derive(Debug, Clone, Default)]
pub struct SessionSpec {
    /// The id; a random one when absent.
    pub id: Option<String>,
    /// The channel the session came from.
    pub channel: Option<String>,
    /// Live or dry-run.
    pub mode: SessionMode,
    /// The frozen instant time arguments are bounded by.
    pub as_of: Option<DateTime<FixedOffset>>,
    /// The owner's auth, as JSON.
    pub auth: Option<Value>,
    /// The workspace directory; a scratch directory removed with the session when absent.
    pub workspace: Option<PathBuf>,
}

/// A session: calls in it share a workspace, a write slot and a trace.
#[derive(Debug)]
pub struct Session {
    id: String,
    channel: Option<String>,
    mode: SessionMode,
    as_of: Option<DateTime<FixedOffset>>,
    auth: Option<Value>,
    workspace: PathBuf,
    _scratch: Option<tempfile::TempDir>,
    write_slot: tokio::sync::Mutex<()>,
    events: EventLog,
}

impl Session {
    /// Open a session; creates the workspace directory if it does not exist.
    pub fn open(spec: SessionSpec) -> anyhow::Result<Self> {
        let (workspace, scratch) = match spec.workspace {
            Some(dir) => {
                std::fs::create_dir_all(&dir).map_err(|e| {
                    anyhow::anyhow!("cannot create workspace {}: {e}", dir.display())
                })?;
                (dir, None)
            }
            None => {
                let scratch = tempfile::Builder::new().prefix("toolhost-ws-").tempdir()?;
                (scratch.path().to_path_buf(), Some(scratch))
            }
        };
        Ok(Self {
            id: spec
                .id
                .unwrap_or_else(|| format!("ses_{}", uuid::Uuid::new_v4().simple())),
            channel: spec.channel,
            mode: spec.mode,
            as_of: spec.as_of,
            auth: spec.auth,
            workspace,
            _scratch: scratch,
            write_slot: tokio::sync::Mutex::new(()),
            events: EventLog::default(),
        })
    }

    /// A live session with a scratch workspace.
    pub fn ephemeral() -> anyhow::Result<Self> {
        Self::open(SessionSpec::default())
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The channel, if any.
    pub fn channel(&self) -> Option<&str> {
        self.channel.as_deref()
    }

    /// Live or dry-run.
    pub fn mode(&self) -> SessionMode {
        self.mode
    }

    /// The frozen instant, if any.
    pub fn as_of(&self) -> Option<DateTime<FixedOffset>> {
        self.as_of
    }

    /// The owner's auth.
    pub fn auth(&self) -> Option<&Value> {
        self.auth.as_ref()
    }

    /// The workspace directory on the host.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The event trace.
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// Take the write slot, or fail at once with `session_busy`.
    pub fn try_write_slot(&self) -> Result<MutexGuard<'_, ()>, CallError> {
        self.write_slot
            .try_lock()
            .map_err(|_| CallError::SessionBusy {
                session: self.id.clone(),
            })
    }
}

/// Parse an absolute ISO-8601 (RFC 3339) instant that carries a timezone.
pub fn parse_instant(text: &str) -> Result<DateTime<FixedOffset>, String> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t);
    }
    let naive = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f"));
    if naive.is_ok() || chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok() {
        return Err(format!(
            "{text:?} has no timezone: add `Z` or an offset such as `+02:00`"
        ));
    }
    Err(format!(
        "{text:?} is not an absolute ISO-8601 instant (expected e.g. \"2026-01-31T12:00:00Z\")"
    ))
}

/// The kind of a trace event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EventKind {
    /// A call was accepted and is about to run.
    #[serde(rename = "actions.requested")]
    ActionsRequested,
    /// A call finished (or was refused after being requested).
    #[serde(rename = "action.result")]
    ActionResult,
}

/// One trace event.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// Position in the session's stream, from 1.
    pub id: u64,
    /// What happened.
    #[serde(rename = "type")]
    pub kind: EventKind,
    /// When.
    pub at: DateTime<Utc>,
    /// The event's payload.
    pub data: EventData,
}

impl Event {
    /// The event as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// An event's payload. Kept typed and shared, and serialized only when
/// someone reads the stream, so recording a call costs no JSON building.
#[derive(Debug, Clone)]
pub enum EventData {
    /// A call was accepted.
    Requested(Arc<CallRequested>),
    /// A call ran (or was stubbed): its envelope and trace.
    Result(Arc<CallResult>),
    /// A call was refused after it was requested.
    Refused(Arc<CallRefused>),
    /// Any other payload.
    Json(Value),
}

impl Serialize for EventData {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Requested(requested) => requested.serialize(serializer),
            Self::Result(result) => ResultView {
                result,
                trace: &result.trace,
            }
            .serialize(serializer),
            Self::Refused(refused) => refused.serialize(serializer),
            Self::Json(value) => value.serialize(serializer),
        }
    }
}

#[derive(Serialize)]
struct ResultView<'a> {
    #[serde(flatten)]
    result: &'a CallResult,
    trace: &'a crate::call::CallTrace,
}

/// The payload of `actions.requested`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRequested {
    /// The call id.
    pub call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The validated input.
    pub input: Arc<Value>,
    /// The session.
    pub session_id: String,
}

/// The payload of an `action.result` for a call refused after it was requested.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRefused {
    /// Always false.
    pub ok: bool,
    /// The call id.
    pub call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The error code and message.
    pub error: Value,
}

/// A session's bounded event history plus a live feed for subscribers.
#[derive(Debug)]
pub struct EventLog {
    history: Mutex<(u64, VecDeque<Event>)>,
    feed: broadcast::Sender<Event>,
}

impl Default for EventLog {
    fn default() -> Self {
        Self {
            history: Mutex::new((0, VecDeque::new())),
            feed: broadcast::channel(1024).0,
        }
    }
}

impl EventLog {
    /// Record an event and send it to subscribers.
    pub fn emit(&self, kind: EventKind, data: EventData) -> Event {
        let mut history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        history.0 += 1;
        let event = Event {
            id: history.0,
            kind,
            at: Utc::now(),
            data,
        };
        if history.1.len() == MAX_EVENTS {
            history.1.pop_front();
        }
        history.1.push_back(event.clone());
        let _ = self.feed.send(event.clone());
        event
    }

    /// Events after `after` (all kept events when `None`).
    pub fn since(&self, after: Option<u64>) -> Vec<Event> {
        let history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        history
            .1
            .iter()
            .filter(|e| after.is_none_or(|a| e.id > a))
            .cloned()
            .collect()
    }

    /// A live feed of new events.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.feed.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_need_a_timezone() {
        assert!(parse_instant("2026-01-31T12:00:00Z").is_ok());
        assert!(parse_instant("2026-01-31T12:00:00.5+02:00").is_ok());
        let err = parse_instant("2026-01-31T12:00:00").unwrap_err();
        assert!(err.contains("no timezone"), "{err}");
        let err = parse_instant("2026-01-31").unwrap_err();
        assert!(err.contains("no timezone"), "{err}");
        let err = parse_instant("now-1h").unwrap_err();
        assert!(err.contains("not an absolute"), "{err}");
    }

    #[test]
    fn write_slot_is_exclusive() {
        let session = Session::ephemeral().unwrap();
        let held = session.try_write_slot().unwrap();
        assert!(matches!(
            session.try_write_slot(),
            Err(CallError::SessionBusy { .. })
        ));
        drop(held);
        assert!(session.try_write_slot().is_ok());
    }

    #[test]
    fn scratch_workspace_is_removed_with_the_session() {
        let session = Session::ephemeral().unwrap();
        let dir = session.workspace().to_path_buf();
        assert!(dir.is_dir());
        drop(session);
        assert!(!dir.exists());
    }

    #[test]
    fn events_are_numbered_and_replayable() {
        let log = EventLog::default();
        log.emit(EventKind::ActionsRequested, EventData::Json(Value::Null));
        log.emit(EventKind::ActionResult, EventData::Json(Value::Null));
        assert_eq!(log.since(None).len(), 2);
        let after_first = log.since(Some(1));
        assert_eq!(after_first.len(), 1);
        assert_eq!(after_first[0].id, 2);
    }
}
