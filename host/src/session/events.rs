//! A session's trace: typed events, a bounded replayable history, a live feed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::call::{CallResult, CallTrace};

/// How many events a session keeps for replay.
pub const MAX_EVENTS: usize = 10_000;

/// The kind of a trace event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EventKind {
    /// A call was accepted and is about to run.
    #[serde(rename = "actions.requested")]
    ActionsRequested,
    /// A call finished (or was refused after being requested).
    #[serde(rename = "action.result")]
    ActionResult,
    /// A call waits for someone to approve or deny it.
    #[serde(rename = "approval.requested")]
    ApprovalRequested,
    /// A waiting call was approved, denied, or expired.
    #[serde(rename = "approval.resolved")]
    ApprovalResolved,
    /// A custom tool was called: the client runs it and answers.
    #[serde(rename = "agent.custom_tool_use")]
    CustomToolUse,
    /// The client answered a custom tool call.
    #[serde(rename = "user.custom_tool_result")]
    CustomToolResult,
}

impl EventKind {
    /// The name clients see (the SSE `event:` field and the JSON `type`).
    pub fn name(self) -> &'static str {
        match self {
            Self::ActionsRequested => "actions.requested",
            Self::ActionResult => "action.result",
            Self::ApprovalRequested => "approval.requested",
            Self::ApprovalResolved => "approval.resolved",
            Self::CustomToolUse => "agent.custom_tool_use",
            Self::CustomToolResult => "user.custom_tool_result",
        }
    }
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
    trace: &'a CallTrace,
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

/// How many live events a slow subscriber may fall behind before it
/// catches up from the history.
const FEED_CAPACITY: usize = 1024;

/// A session's bounded event history plus a live feed for subscribers.
#[derive(Debug, Default)]
pub struct EventLog {
    history: Mutex<(u64, VecDeque<Event>)>,
    /// Made on first subscription: most sessions (one per scratch call) never have one.
    feed: OnceLock<broadcast::Sender<Event>>,
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
        if let Some(feed) = self.feed.get()
            && feed.receiver_count() > 0
        {
            let _ = feed.send(event.clone());
        }
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

    /// The event with this id, if it is still kept.
    pub fn get(&self, id: u64) -> Option<Event> {
        let history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        let first = history.1.front()?.id;
        history
            .1
            .get(usize::try_from(id.checked_sub(first)?).ok()?)
            .cloned()
    }

    /// Drop kept events older than `cutoff`; returns how many went.
    pub fn prune_before(&self, cutoff: DateTime<Utc>) -> usize {
        let mut history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        let before = history.1.len();
        while history.1.front().is_some_and(|e| e.at < cutoff) {
            history.1.pop_front();
        }
        before - history.1.len()
    }

    /// A live feed of new events. Subscribe before reading [`Self::since`]
    /// so nothing falls between the two; skip ids already seen.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        // Under the history lock, so no event is sent between a subscriber's
        // `subscribe` and its `since` without being in one of them.
        let _history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        self.feed
            .get_or_init(|| broadcast::channel(FEED_CAPACITY).0)
            .subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_numbered_and_replayable() {
        let log = EventLog::default();
        log.emit(EventKind::ActionsRequested, EventData::Json(Value::Null));
        log.emit(EventKind::ActionResult, EventData::Json(Value::Null));
        assert_eq!(log.since(None).len(), 2);
        let after_first = log.since(Some(1));
        assert_eq!(after_first.len(), 1);
        assert_eq!(after_first[0].id, 2);
        assert_eq!(log.get(2).map(|e| e.kind), Some(EventKind::ActionResult));
        assert!(log.get(3).is_none());
        assert!(log.get(0).is_none());
    }

    #[test]
    fn old_events_are_pruned() {
        let log = EventLog::default();
        log.emit(EventKind::ActionsRequested, EventData::Json(Value::Null));
        assert_eq!(
            log.prune_before(Utc::now() + chrono::Duration::seconds(1)),
            1
        );
        assert!(log.since(None).is_empty());
        let next = log.emit(EventKind::ActionResult, EventData::Json(Value::Null));
        assert_eq!(next.id, 2, "ids keep counting after a prune");
    }

    #[test]
    fn kind_names_match_their_json() {
        for kind in [
            EventKind::ActionsRequested,
            EventKind::ActionResult,
            EventKind::ApprovalRequested,
            EventKind::ApprovalResolved,
            EventKind::CustomToolUse,
            EventKind::CustomToolResult,
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.name());
        }
    }
}
