//! Calls that wait for someone: an approval, a custom tool's result, or
//! the answer to a question the tool asks (`toolhost:tool/ask`).
//!
//! A call that parks here answers its HTTP request with `202` and its id;
//! the call goes on in the background, the approval or result arrives on
//! another request, and `GET …/calls/<id>` polls or long-polls the outcome.

mod approver;
mod asker;
mod custom_tools;
mod mirror;

pub use approver::BoardApprover;
pub use asker::{Answered, BoardAsker};
pub use custom_tools::BoardCustomTools;

use futures::future::BoxFuture;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{oneshot, watch};

use toolhost::ask::{AskError, Asker, ElicitAnswer, Elicitation, Sampling, SamplingResult};
use toolhost::call::{
    ApprovalDecision, ApprovalRequest, Approver, CallResult, CustomToolRunner, CustomToolUse,
};
use toolhost::error::CallError;
use toolhost::output::ToolOutput;
use toolhost::redis_store::lease::Lease;
use toolhost::session::{EventData, EventKind, Session};

use axum::http::StatusCode;

use super::approval_log::ApprovalLog;
use super::error::ApiError;
use super::fleet_calls::{FleetCalls, Forwarded};

/// Where a parked call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Waiting for `POST …/approvals/<callId>`.
    AwaitingApproval,
    /// Waiting for a `user.custom_tool_result` event.
    AwaitingCustomToolResult,
    /// The tool asked the user: waiting for a `user.elicitation_result`.
    AwaitingElicitationResult,
    /// The tool asked the model: waiting for a `user.sampling_result`.
    AwaitingSamplingResult,
    /// Running (approved, or answered).
    Running,
    /// Finished: the outcome is kept.
    Done,
}

impl Status {
    /// Its JSON name.
    pub fn name(self) -> &'static str {
        match self {
            Self::AwaitingApproval => "awaiting_approval",
            Self::AwaitingCustomToolResult => "awaiting_custom_tool_result",
            Self::AwaitingElicitationResult => "awaiting_elicitation_result",
            Self::AwaitingSamplingResult => "awaiting_sampling_result",
            Self::Running => "running",
            Self::Done => "done",
        }
    }

    /// Whether a call in this state waits for someone (and so counts
    /// against `max_waiting_calls`).
    pub fn is_waiting(self) -> bool {
        matches!(
            self,
            Self::AwaitingApproval
                | Self::AwaitingCustomToolResult
                | Self::AwaitingElicitationResult
                | Self::AwaitingSamplingResult
        )
    }
}

/// A finished call's outcome as the API reports it.
pub type Outcome = Result<Arc<CallResult>, Arc<CallError>>;

/// Calls that may wait for an approval or a custom tool's result at once,
/// on one server, by default (`[server] max_waiting_calls`); one more is
/// refused at once instead of parking.
pub const MAX_WAITING_CALLS: usize = toolhost::config::DEFAULT_MAX_WAITING_CALLS;

/// One call that parked.
struct Parked {
    tool_name: String,
    session_id: String,
    status: watch::Sender<(Status, Option<Outcome>)>,
    approval: Mutex<Option<oneshot::Sender<ApprovalDecision>>>,
    answer: Mutex<Option<oneshot::Sender<ToolOutput>>>,
    asked: Mutex<Option<oneshot::Sender<Answered>>>,
    finished_at: Mutex<Option<Instant>>,
    /// Whether the fleet has been told it waits here (and a mirror task
    /// keeps Redis up to date until it is done).
    shared: std::sync::atomic::AtomicBool,
    /// How many times it has started waiting: an answer another server
    /// took for an earlier wait is never applied to a later one.
    waits: AtomicU64,
}

/// A snapshot of a parked call for `GET …/calls/<id>`.
#[derive(Debug, Clone)]
pub struct CallView {
    /// The tool.
    pub tool_name: String,
    /// The session.
    pub session_id: String,
    /// Where it stands.
    pub status: Status,
    /// The outcome, once done.
    pub outcome: Option<Outcome>,
}

/// Why an answer could not be delivered.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// No parked call has this id.
    #[error("no call `{0}` is known (it never waited, or its record expired)")]
    NotFound(String),
    /// The call is not waiting for this kind of answer.
    #[error("call `{call}` is not waiting for {what} (it is {status:?})")]
    NotWaiting {
        /// The call id.
        call: String,
        /// What was offered.
        what: &'static str,
        /// Where it stands.
        status: Status,
    },
}

impl From<AnswerError> for ApiError {
    fn from(error: AnswerError) -> Self {
        match error {
            AnswerError::NotFound(_) => {
                Self::new(StatusCode::NOT_FOUND, "call_not_found", error.to_string())
            }
            AnswerError::NotWaiting { .. } => {
                Self::new(StatusCode::CONFLICT, "call_not_waiting", error.to_string())
            }
        }
    }
}

/// The parked calls of one server.
pub struct Board {
    calls: Mutex<HashMap<String, Arc<Parked>>>,
    max_waiting: usize,
    /// How many parked calls wait now: kept by [`Board::set_status`], so
    /// parking never counts the calls one by one.
    waiting: AtomicUsize,
    /// Where a fleet's servers find the calls parked on each other.
    fleet: Option<Arc<FleetCalls>>,
    /// Applies what another server received for a call parked here.
    applier: OnceLock<Applier>,
    /// The approvals asked for here, pending and resolved.
    approvals: ApprovalLog,
}

/// Applies, on the server a call is parked on, what another server
/// received for it, as if it had been posted here.
pub type Applier =
    Arc<dyn Fn(String, Forwarded) -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

impl Default for Board {
    fn default() -> Self {
        Self::with_max_waiting(MAX_WAITING_CALLS)
    }
}

impl Board {
    /// A board on which at most `max` calls wait at once.
    pub fn with_max_waiting(max: usize) -> Self {
        Self {
            calls: Mutex::default(),
            max_waiting: max,
            waiting: AtomicUsize::new(0),
            fleet: None,
            applier: OnceLock::new(),
            approvals: ApprovalLog::default(),
        }
    }

    /// The same board, its parked calls shared with a fleet through `fleet`.
    pub fn shared(mut self, fleet: Arc<FleetCalls>) -> Self {
        self.fleet = Some(fleet);
        self
    }

    /// The fleet's parked calls, when the board shares them.
    pub fn fleet(&self) -> Option<&Arc<FleetCalls>> {
        self.fleet.as_ref()
    }

    /// The approvals asked for on this server.
    pub fn approvals(&self) -> &ApprovalLog {
        &self.approvals
    }

    /// Apply answers that reach other servers with `applier`.
    pub fn set_applier(&self, applier: Applier) {
        let _ = self.applier.set(applier);
    }

    /// Park a call, or `None` when `max_waiting` calls wait already.
    fn park(
        &self,
        call_id: &str,
        tool_name: &str,
        session_id: &str,
        status: Status,
    ) -> Option<Arc<Parked>> {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        if !calls.contains_key(call_id) && self.waiting.load(Ordering::Relaxed) >= self.max_waiting
        {
            return None;
        }
        let entry = calls
            .entry(call_id.to_string())
            .or_insert_with(|| {
                Arc::new(Parked {
                    tool_name: tool_name.to_string(),
                    session_id: session_id.to_string(),
                    status: watch::channel((Status::Running, None)).0,
                    approval: Mutex::new(None),
                    answer: Mutex::new(None),
                    asked: Mutex::new(None),
                    finished_at: Mutex::new(None),
                    shared: std::sync::atomic::AtomicBool::new(false),
                    waits: AtomicU64::new(0),
                })
            })
            .clone();
        self.set_status(&entry, status, None);
        Some(entry)
    }

    /// Move a parked call to `status` (with its outcome, once done),
    /// keeping the count of waiting calls.
    fn set_status(&self, parked: &Parked, status: Status, outcome: Option<Outcome>) {
        let mut was = Status::Running;
        parked.status.send_modify(|s| {
            was = std::mem::replace(&mut s.0, status);
            if outcome.is_some() {
                s.1 = outcome;
            }
        });
        match (was.is_waiting(), status.is_waiting()) {
            (false, true) => {
                parked.waits.fetch_add(1, Ordering::Relaxed);
                self.waiting.fetch_add(1, Ordering::Relaxed);
            }
            (true, false) => {
                self.waiting.fetch_sub(1, Ordering::Relaxed);
            }
            _ => {}
        }
    }

    fn get(&self, call_id: &str) -> Option<Arc<Parked>> {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls.get(call_id).cloned()
    }

    /// Record a call's outcome if it parked (calls that never waited leave no record).
    pub fn finish(&self, call_id: &str, outcome: &Outcome) {
        if let Some(parked) = self.get(call_id) {
            *parked
                .finished_at
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
            self.set_status(&parked, Status::Done, Some(outcome.clone()));
        }
    }

    /// Where a parked call stands; with `wait`, wait up to that long for it
    /// to finish first.
    pub async fn view(&self, call_id: &str, wait: Duration) -> Option<CallView> {
        let parked = self.get(call_id)?;
        let mut rx = parked.status.subscribe();
        if !wait.is_zero() {
            let _ = tokio::time::timeout(wait, rx.wait_for(|s| s.0 == Status::Done)).await;
        }
        let (status, outcome) = rx.borrow().clone();
        Some(CallView {
            tool_name: parked.tool_name.clone(),
            session_id: parked.session_id.clone(),
            status,
            outcome,
        })
    }

    /// Approve or deny a call waiting for approval.
    pub fn decide(&self, call_id: &str, decision: ApprovalDecision) -> Result<(), AnswerError> {
        let parked = self.get(call_id);
        deliver(call_id, parked, |p| &p.approval, decision, "an approval")
    }

    /// Deliver a custom tool's result. `session_id` must be the call's own.
    pub fn answer(
        &self,
        call_id: &str,
        session_id: &str,
        output: ToolOutput,
    ) -> Result<(), AnswerError> {
        let parked = self.get(call_id).filter(|p| p.session_id == session_id);
        deliver(
            call_id,
            parked,
            |p| &p.answer,
            output,
            "a custom tool result",
        )
    }

    /// Deliver the answer to a question the call asked. `session_id` must
    /// be the call's own, and the answer of the kind asked.
    pub fn answer_question(
        &self,
        call_id: &str,
        session_id: &str,
        answer: Answered,
    ) -> Result<(), AnswerError> {
        let parked = self.get(call_id).filter(|p| p.session_id == session_id);
        let (what, status) = match &answer {
            Answered::Elicitation(_) => {
                ("an elicitation result", Status::AwaitingElicitationResult)
            }
            Answered::Sampling(_) => ("a sampling result", Status::AwaitingSamplingResult),
        };
        if let Some(parked) = &parked
            && parked.status.borrow().0 != status
        {
            return Err(AnswerError::NotWaiting {
                call: call_id.to_string(),
                what,
                status: parked.status.borrow().0,
            });
        }
        deliver(call_id, parked, |p| &p.asked, answer, what)
    }

    /// Forget the finished calls of sessions that are gone.
    pub fn forget_sessions(&self, removed: &[String]) {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls.retain(|_, parked| {
            let finished = parked
                .finished_at
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some();
            !(finished && removed.contains(&parked.session_id))
        });
    }

    /// Forget calls finished longer ago than `keep`.
    pub fn sweep(&self, keep: Duration) {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls.retain(|_, parked| {
            parked
                .finished_at
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_none_or(|at| at.elapsed() < keep)
        });
    }
}

/// Hand `value` to the parked call through the slot `pick` selects, if the
/// call waits there.
fn deliver<T>(
    call_id: &str,
    parked: Option<Arc<Parked>>,
    pick: impl Fn(&Parked) -> &Mutex<Option<oneshot::Sender<T>>>,
    value: T,
    what: &'static str,
) -> Result<(), AnswerError> {
    let parked = parked.ok_or_else(|| AnswerError::NotFound(call_id.to_string()))?;
    let sender = pick(&parked)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    match sender.map(|tx| tx.send(value)) {
        Some(Ok(())) => Ok(()),
        _ => Err(AnswerError::NotWaiting {
            call: call_id.to_string(),
            what,
            status: parked.status.borrow().0,
        }),
    }
}

/// Tells the request handler that its call parked, so it can answer `202`.
#[derive(Default)]
pub struct ParkSignal(Mutex<Option<oneshot::Sender<Status>>>);

impl ParkSignal {
    /// A signal and the receiver the handler waits on.
    pub fn new() -> (Arc<Self>, oneshot::Receiver<Status>) {
        let (tx, rx) = oneshot::channel();
        (Arc::new(Self(Mutex::new(Some(tx)))), rx)
    }

    fn raise(&self, status: Status) {
        if let Some(tx) = self.0.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = tx.send(status);
        }
    }
}

#[cfg(test)]
mod tests;
