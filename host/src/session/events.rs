//! A session's trace: typed events, a bounded replayable history, a live feed.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use chrono::{DateTime, Utc};
use futures::StreamExt as _;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

use super::Unavailable;

use crate::envelope::{CallProgress, CallRefused, CallRequested, CallResult, CallTrace};
use crate::usage::Usage;

/// How many events a session keeps for replay.
pub const MAX_EVENTS: usize = 10_000;
/// Bytes of payload one session's history keeps by default
/// (`[server] session_history_mb`): past it, the oldest events' payloads
/// are dropped (their ids, call ids, tools, outcomes and receipts stay),
/// then the oldest events.
pub const MAX_SESSION_HISTORY_BYTES: usize = 16 << 20;
/// Bytes of payload every session's history keeps together by default
/// (`[server] history_mb`): past it, a session recording an event drops its
/// own oldest payloads.
pub const MAX_HISTORY_BYTES: usize = 256 << 20;

/// What sessions' histories may hold: each, and all that share it together.
/// Clones share the count of what all of them hold.
#[derive(Debug, Clone)]
pub struct HistoryBudget {
    session_bytes: usize,
    every_bytes: usize,
    held: Arc<AtomicUsize>,
}

impl HistoryBudget {
    /// A budget of `session_bytes` per history and `every_bytes` for all the
    /// histories given clones of it, counted apart from any other budget.
    pub fn new(session_bytes: usize, every_bytes: usize) -> Self {
        Self {
            session_bytes,
            every_bytes,
            held: Arc::default(),
        }
    }

    /// Bytes one history may hold.
    pub fn session_bytes(&self) -> usize {
        self.session_bytes
    }

    /// Bytes every history sharing this budget may hold together.
    pub fn every_bytes(&self) -> usize {
        self.every_bytes
    }

    /// The bytes every history sharing this budget holds now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }
}

/// The defaults, shared by every session made without a budget of its own
/// (the CLI's and the library's), so the process holds at most
/// [`MAX_HISTORY_BYTES`] for them together.
impl Default for HistoryBudget {
    fn default() -> Self {
        static HELD: std::sync::LazyLock<Arc<AtomicUsize>> = std::sync::LazyLock::new(Arc::default);
        Self {
            session_bytes: MAX_SESSION_HISTORY_BYTES,
            every_bytes: MAX_HISTORY_BYTES,
            held: Arc::clone(&HELD),
        }
    }
}
/// What an event costs besides its payload's bytes, and what one whose
/// payload was dropped costs.
pub(super) const EVENT_OVERHEAD_BYTES: usize = 256;

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
    /// A running call reported how far it has got.
    #[serde(rename = "call.progress")]
    CallProgress,
    /// A custom tool was called: the client runs it and answers.
    #[serde(rename = "agent.custom_tool_use")]
    CustomToolUse,
    /// The client answered a custom tool call.
    #[serde(rename = "user.custom_tool_result")]
    CustomToolResult,
    /// A running call asks the user (`toolhost:tool/ask`'s `elicit`).
    #[serde(rename = "agent.elicitation")]
    Elicitation,
    /// The client answered an elicitation.
    #[serde(rename = "user.elicitation_result")]
    ElicitationResult,
    /// A running call asks the client's model (`sample`).
    #[serde(rename = "agent.sampling")]
    Sampling,
    /// The client answered a sampling request.
    #[serde(rename = "user.sampling_result")]
    SamplingResult,
    /// A call saved an artifact of the session.
    #[serde(rename = "artifact.created")]
    ArtifactCreated,
    /// A tool sent the session a message (`toolhost:tool/sessions`'s
    /// `send`): the application reading the stream consumes it.
    #[serde(rename = "user.message")]
    UserMessage,
    /// A reminder fired: its message was appended, its call made, or why
    /// neither could be.
    #[serde(rename = "reminder.fired")]
    ReminderFired,
    /// The session was moved to another version of its agent: what changed.
    #[serde(rename = "session.upgraded")]
    SessionUpgraded,
}

impl EventKind {
    /// Every kind.
    const ALL: [Self; 15] = [
        Self::ActionsRequested,
        Self::ActionResult,
        Self::ApprovalRequested,
        Self::ApprovalResolved,
        Self::CallProgress,
        Self::CustomToolUse,
        Self::CustomToolResult,
        Self::Elicitation,
        Self::ElicitationResult,
        Self::Sampling,
        Self::SamplingResult,
        Self::ArtifactCreated,
        Self::UserMessage,
        Self::ReminderFired,
        Self::SessionUpgraded,
    ];

    /// The kind named `name` (as [`EventKind::name`] gives it).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The name clients see (the SSE `event:` field and the JSON `type`).
    pub fn name(self) -> &'static str {
        match self {
            Self::ActionsRequested => "actions.requested",
            Self::ActionResult => "action.result",
            Self::ApprovalRequested => "approval.requested",
            Self::ApprovalResolved => "approval.resolved",
            Self::CallProgress => "call.progress",
            Self::CustomToolUse => "agent.custom_tool_use",
            Self::CustomToolResult => "user.custom_tool_result",
            Self::Elicitation => "agent.elicitation",
            Self::ElicitationResult => "user.elicitation_result",
            Self::Sampling => "agent.sampling",
            Self::SamplingResult => "user.sampling_result",
            Self::ArtifactCreated => "artifact.created",
            Self::UserMessage => "user.message",
            Self::ReminderFired => "reminder.fired",
            Self::SessionUpgraded => "session.upgraded",
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
    /// What the history counts it as, in bytes.
    #[serde(skip)]
    bytes: usize,
}

impl Event {
    /// An event read back from a shared store, its payload as JSON.
    pub(super) fn stored(id: u64, kind: EventKind, at: DateTime<Utc>, data: Value) -> Self {
        let data = EventData::Json(data);
        Self {
            id,
            kind,
            at,
            bytes: data.bytes(),
            data,
        }
    }

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
    /// A running call's progress report.
    Progress(Arc<CallProgress>),
    /// Any other payload.
    Json(Value),
    /// What is left of a payload the history dropped to stay in its bytes.
    Dropped(Arc<DroppedPayload>),
}

impl EventData {
    /// What the history counts this payload as: its bytes, estimated
    /// without serializing it where it is a call's result.
    fn bytes(&self) -> usize {
        EVENT_OVERHEAD_BYTES
            + match self {
                Self::Requested(requested) => requested.input_bytes,
                Self::Result(result) => {
                    let trace = &result.trace;
                    let logs: usize = trace.logs.iter().map(|l| l.message.len() + 64).sum();
                    // The output, and the envelope's `result` derived from it.
                    2 * usize::try_from(result.usage.output_bytes).unwrap_or(usize::MAX)
                        + trace.stdout.len()
                        + trace.stderr.len()
                        + logs
                }
                Self::Refused(refused) => refused.error.to_string().len(),
                Self::Progress(progress) => progress.report.message.as_ref().map_or(0, String::len),
                Self::Json(value) => value.to_string().len(),
                Self::Dropped(_) => 0,
            }
    }

    /// The ids and outcome this payload keeps when it is dropped; `None`
    /// when there is nothing to drop.
    fn dropped(&self) -> Option<Self> {
        let dropped = match self {
            Self::Requested(requested) => DroppedPayload {
                call_id: Some(requested.call.id.clone()),
                tool_name: Some(requested.call.tool.clone()),
                ..DroppedPayload::EMPTY
            },
            Self::Result(result) => DroppedPayload {
                call_id: Some(result.call.id.clone()),
                tool_name: Some(result.call.tool.clone()),
                is_error: Some(result.is_error),
                usage: Some(result.usage.clone()),
                ..DroppedPayload::EMPTY
            },
            Self::Json(value) => DroppedPayload {
                call_id: value["callId"].as_str().map(str::to_string),
                ..DroppedPayload::EMPTY
            },
            Self::Refused(_) | Self::Progress(_) | Self::Dropped(_) => return None,
        };
        Some(Self::Dropped(Arc::new(dropped)))
    }
}

/// An event whose payload the history dropped: what identifies it stays.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DroppedPayload {
    /// The call it was about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// For a result: whether the tool failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// For a result: its receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Always true.
    pub payload_dropped: bool,
}

impl DroppedPayload {
    /// Nothing kept but the mark.
    const EMPTY: Self = Self {
        call_id: None,
        tool_name: None,
        is_error: None,
        usage: None,
        payload_dropped: true,
    };
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
            Self::Progress(progress) => progress.serialize(serializer),
            Self::Json(value) => value.serialize(serializer),
            Self::Dropped(dropped) => dropped.serialize(serializer),
        }
    }
}

#[derive(Serialize)]
struct ResultView<'a> {
    #[serde(flatten)]
    result: &'a CallResult,
    trace: &'a CallTrace,
}

/// How many live events a slow subscriber may fall behind before it
/// catches up from the history.
const FEED_CAPACITY: usize = 1024;

/// Where a log a fleet shares keeps its events (a Redis stream), for
/// [`EventLog`] to append to and read from.
pub(super) trait SharedLog: Send + Sync + std::fmt::Debug {
    /// Queue an event; it is appended after every event queued before it.
    fn emit(&self, kind: EventKind, at: DateTime<Utc>, payload: String);
    /// Append an event (after those queued before it): its number.
    fn append(
        &self,
        kind: EventKind,
        at: DateTime<Utc>,
        payload: String,
    ) -> BoxFuture<'_, Result<u64, String>>;
    /// Every kept event after `after`.
    fn since(&self, after: Option<u64>) -> BoxFuture<'_, Result<Vec<Event>, String>>;
    /// Event `id`, if it is still kept.
    fn get(&self, id: u64) -> BoxFuture<'_, Result<Option<Event>, String>>;
    /// Kept events after `after`, then new ones as any server appends them.
    fn follow(self: Arc<Self>, after: Option<u64>) -> BoxStream<'static, Event>;
}

/// A session's bounded event history plus a live feed for subscribers:
/// kept in this process, or in Redis for a session a fleet shares.
#[derive(Debug, Default)]
pub struct EventLog {
    history: Mutex<History>,
    /// Made on first subscription: most sessions (one per scratch call) never have one.
    feed: OnceLock<broadcast::Sender<Event>>,
    /// The session's stream in Redis, which then holds its history.
    shared: Option<Arc<dyn SharedLog>>,
}

/// The kept events and what they hold.
#[derive(Debug)]
struct History {
    /// The last id given.
    last: u64,
    events: VecDeque<Event>,
    /// The kept events' bytes, also counted in `every`.
    bytes: usize,
    /// How many of the oldest events have had their payload dropped.
    dropped: usize,
    /// The bytes this history and those sharing its budget may hold.
    budget: HistoryBudget,
}

impl History {
    fn new(budget: HistoryBudget) -> Self {
        Self {
            last: 0,
            events: VecDeque::new(),
            bytes: 0,
            dropped: 0,
            budget,
        }
    }
}

impl Default for History {
    fn default() -> Self {
        Self::new(HistoryBudget::default())
    }
}

impl History {
    fn push(&mut self, event: Event) {
        self.bytes += event.bytes;
        self.budget.held.fetch_add(event.bytes, Ordering::Relaxed);
        self.events.push_back(event);
        if self.events.len() > MAX_EVENTS {
            self.pop_oldest();
        }
        self.shrink();
    }

    /// Drop the oldest payloads, then the oldest events, until this history
    /// is within its bytes and every history together within theirs (as
    /// far as this one can help).
    fn shrink(&mut self) {
        let over =
            |h: &Self| h.bytes > h.budget.session_bytes || h.budget.held() > h.budget.every_bytes;
        while over(self) && self.dropped < self.events.len() {
            let event = &mut self.events[self.dropped];
            self.dropped += 1;
            if let Some(dropped) = event.data.dropped() {
                let before = event.bytes;
                event.data = dropped;
                event.bytes = event.data.bytes();
                self.bytes -= before - event.bytes;
                self.budget
                    .held
                    .fetch_sub(before - event.bytes, Ordering::Relaxed);
            }
        }
        while self.bytes > self.budget.session_bytes && !self.events.is_empty() {
            self.pop_oldest();
        }
    }

    fn pop_oldest(&mut self) {
        if let Some(event) = self.events.pop_front() {
            self.bytes -= event.bytes;
            self.budget.held.fetch_sub(event.bytes, Ordering::Relaxed);
            self.dropped = self.dropped.saturating_sub(1);
        }
    }
}

impl Drop for History {
    fn drop(&mut self) {
        self.budget.held.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

impl EventLog {
    /// An empty log whose history holds what `budget` allows.
    pub fn with_budget(budget: HistoryBudget) -> Self {
        Self {
            history: Mutex::new(History::new(budget)),
            feed: OnceLock::new(),
            shared: None,
        }
    }

    /// A log kept in a Redis stream the fleet shares.
    pub(super) fn shared(events: Arc<dyn SharedLog>) -> Self {
        Self {
            shared: Some(events),
            ..Self::default()
        }
    }

    /// Record an event and send it to subscribers. On a shared log it is
    /// appended to Redis soon after, in order; see [`EventLog::append`]
    /// for its number.
    pub fn emit(&self, kind: EventKind, data: EventData) {
        match &self.shared {
            Some(shared) => shared.emit(kind, Utc::now(), payload(&data)),
            None => {
                self.record(kind, data);
            }
        }
    }

    /// Record an event, after every event emitted before it: its number.
    pub async fn append(&self, kind: EventKind, data: EventData) -> Result<u64, Unavailable> {
        match &self.shared {
            Some(shared) => shared
                .append(kind, Utc::now(), payload(&data))
                .await
                .map_err(Unavailable),
            None => Ok(self.record(kind, data).id),
        }
    }

    fn record(&self, kind: EventKind, data: EventData) -> Event {
        let mut history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        history.last += 1;
        let event = Event {
            id: history.last,
            kind,
            at: Utc::now(),
            bytes: data.bytes(),
            data,
        };
        history.push(event.clone());
        if let Some(feed) = self.feed.get()
            && feed.receiver_count() > 0
        {
            let _ = feed.send(event.clone());
        }
        event
    }

    /// Events after `after` (all kept events when `None`).
    pub async fn since(&self, after: Option<u64>) -> Result<Vec<Event>, Unavailable> {
        match &self.shared {
            Some(shared) => shared.since(after).await.map_err(Unavailable),
            None => Ok(self.kept(after)),
        }
    }

    /// The event with this id, if it is still kept.
    pub async fn get(&self, id: u64) -> Result<Option<Event>, Unavailable> {
        match &self.shared {
            Some(shared) => shared.get(id).await.map_err(Unavailable),
            None => Ok(self.kept_event(id)),
        }
    }

    /// Events after `after` kept in this process, at once: all of them
    /// for a log on one machine, none for a shared log (its history is in
    /// Redis: see [`EventLog::since`]).
    pub fn kept(&self, after: Option<u64>) -> Vec<Event> {
        let history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        history
            .events
            .iter()
            .filter(|e| after.is_none_or(|a| e.id > a))
            .cloned()
            .collect()
    }

    fn kept_event(&self, id: u64) -> Option<Event> {
        let history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        let first = history.events.front()?.id;
        history
            .events
            .get(usize::try_from(id.checked_sub(first)?).ok()?)
            .cloned()
    }

    /// Drop kept events older than `cutoff`; returns how many went. A
    /// shared log is bounded by count and bytes only, and goes with its
    /// session.
    pub fn prune_before(&self, cutoff: DateTime<Utc>) -> usize {
        let mut history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        let before = history.events.len();
        while history.events.front().is_some_and(|e| e.at < cutoff) {
            history.pop_oldest();
        }
        before - history.events.len()
    }

    /// A live feed of new events. Subscribe before reading [`Self::kept`]
    /// so nothing falls between the two; skip ids already seen.
    fn subscribe(&self) -> broadcast::Receiver<Event> {
        // Under the history lock, so no event is sent between a subscriber's
        // `subscribe` and its `kept` without being in one of them.
        let _history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        self.feed
            .get_or_init(|| broadcast::channel(FEED_CAPACITY).0)
            .subscribe()
    }

    /// Kept events after `after`, then new ones as they come (on a shared
    /// log, from every server); a follower that falls behind catches up
    /// from the kept history. `log` gives the log from what it owns.
    pub(super) fn follow<T: Send + Sync + 'static>(
        owner: Arc<T>,
        log: fn(&T) -> &EventLog,
        after: Option<u64>,
    ) -> BoxStream<'static, Event> {
        if let Some(shared) = &log(&owner).shared {
            return Arc::clone(shared).follow(after);
        }
        let feed = log(&owner).subscribe();
        let backlog: VecDeque<Event> = log(&owner).kept(after).into();
        let last = after.unwrap_or(0);
        futures::stream::unfold(
            (owner, feed, backlog, last),
            move |(owner, mut feed, mut backlog, mut last)| async move {
                loop {
                    if let Some(event) = next_after(&mut backlog, &mut last) {
                        return Some((event, (owner, feed, backlog, last)));
                    }
                    match feed.recv().await {
                        Ok(event) => backlog.push_back(event),
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            backlog = log(&owner).kept(Some(last)).into();
                        }
                        Err(broadcast::error::RecvError::Closed) => return None,
                    }
                }
            },
        )
        .boxed()
    }
}

/// The first event of `backlog` after `last` (dropping those before),
/// which becomes the last one seen: followers never give an event twice.
pub(super) fn next_after(backlog: &mut VecDeque<Event>, last: &mut u64) -> Option<Event> {
    let event = std::iter::from_fn(|| backlog.pop_front()).find(|e| e.id > *last)?;
    *last = event.id;
    Some(event)
}

/// An event's payload as the JSON a shared log stores.
fn payload(data: &EventData) -> String {
    serde_json::to_string(data).unwrap_or_else(|_| "null".to_string())
}

#[cfg(test)]
mod tests;
