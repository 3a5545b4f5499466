//! Calls that wait for someone: an approval, a custom tool's result, or
//! the answer to a question the tool asks (`toolhost:tool/ask`).
//!
//! A call that parks here answers its HTTP request with `202` and its id;
//! the call goes on in the background, the approval or result arrives on
//! another request, and `GET …/calls/<id>` polls or long-polls the outcome.

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
pub const MAX_WAITING_CALLS: usize = 1024;

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

    /// Tell the fleet that `parked` (call `call_id`) waits here, before
    /// anyone is told it waits: from then on its status and outcome are
    /// mirrored into Redis, and what another server receives for it is
    /// applied here. Without Redis it can still be answered here.
    async fn share(&self, call_id: &str, parked: &Arc<Parked>) {
        let Some(fleet) = &self.fleet else {
            return;
        };
        let status = parked.status.borrow().0;
        let wait = parked.waits.load(Ordering::Relaxed);
        if parked.shared.swap(true, Ordering::Relaxed) {
            // Waiting again (a question after its approval): its mirror
            // goes on; the fleet must see it waits before anyone is told.
            if let Err(e) = fleet.wait_again(call_id, status.name(), wait).await {
                tracing::warn!(call = call_id, "only this server can answer the call: {e}");
            }
            return;
        }
        let parked_call = (
            call_id,
            parked.tool_name.as_str(),
            parked.session_id.as_str(),
        );
        match fleet.park(parked_call, status.name(), wait).await {
            Ok(lease) => {
                tokio::spawn(mirror(
                    fleet.clone(),
                    call_id.to_string(),
                    parked.status.subscribe(),
                    lease,
                ));
                if let Some(applier) = self.applier.get() {
                    tokio::spawn(take_answers(
                        fleet.clone(),
                        call_id.to_string(),
                        Arc::downgrade(parked),
                        applier.clone(),
                    ));
                }
            }
            Err(e) => {
                parked.shared.store(false, Ordering::Relaxed);
                tracing::warn!(call = call_id, "only this server can answer the call: {e}");
            }
        }
    }

    /// Tell the fleet where call `call_id`'s approval stands: waiting until
    /// `expires_at`, or (`None`) resolved. A failure is logged: the call
    /// can still be approved through any server, only the fleet's list
    /// misses it.
    async fn share_approval(
        &self,
        call_id: &str,
        expires_at: Option<chrono::DateTime<chrono::Utc>>,
    ) {
        let (Some(fleet), Some(entry)) = (&self.fleet, self.approvals.view(call_id)) else {
            return;
        };
        let shared = match expires_at {
            Some(at) => fleet.approvals().asked(call_id, entry, at).await,
            None => fleet.approvals().resolved(call_id, &entry).await,
        };
        if let Err(e) = shared {
            tracing::warn!(
                call = call_id,
                "the fleet's list of approvals misses this change: {e}"
            );
        }
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

/// Mirror call `call_id`'s status and outcome into Redis until it is done,
/// holding `lease`, which says this server runs it.
async fn mirror(
    fleet: Arc<FleetCalls>,
    call_id: String,
    mut status: watch::Receiver<(Status, Option<Outcome>)>,
    lease: Lease,
) {
    loop {
        let (now, outcome) = status.borrow_and_update().clone();
        let mirrored = match &outcome {
            Some(outcome) if now == Status::Done => {
                let (code, body) = answered(outcome);
                fleet.finish(&call_id, code, &body).await
            }
            _ => fleet.set_status(&call_id, now.name()).await,
        };
        if let Err(e) = mirrored {
            tracing::warn!(call = %call_id, "the fleet may not see where the call stands: {e}");
        }
        if now == Status::Done || status.changed().await.is_err() {
            break;
        }
    }
    lease.release().await;
}

/// Apply, with `applier`, what other servers receive for call `call_id`
/// each time it waits, until it is done. Only an answer given while the
/// call was in its current wait is applied; one is never cut off halfway
/// through being applied. Holds the call weakly: once the board forgets
/// it (its session ended), its status ends and so does this.
async fn take_answers(
    fleet: Arc<FleetCalls>,
    call_id: String,
    parked: std::sync::Weak<Parked>,
    applier: Applier,
) {
    let Some(mut status) = parked.upgrade().map(|p| p.status.subscribe()) else {
        return;
    };
    loop {
        let now = match status
            .wait_for(|s| s.0.is_waiting() || s.0 == Status::Done)
            .await
        {
            Ok(now) => now.0,
            Err(_) => return,
        };
        if now == Status::Done {
            return;
        }
        let (given_in, answer) = tokio::select! {
            taken = fleet.answer(&call_id) => taken,
            left = status.wait_for(|s| !s.0.is_waiting()) => {
                if left.is_err() {
                    return;
                }
                continue;
            }
        };
        let Some(waits) = parked.upgrade().map(|p| p.waits.load(Ordering::Relaxed)) else {
            return;
        };
        if given_in != waits {
            tracing::debug!(call = %call_id, "an answer to an earlier wait is dropped");
            continue;
        }
        if let Err(e) = applier(call_id.clone(), answer).await {
            tracing::warn!(call = %call_id, "an answer from another server: {e}");
        }
    }
}

/// The HTTP status and body `GET …/calls/<id>` answers a finished call with.
fn answered(outcome: &Outcome) -> (u16, serde_json::Value) {
    match outcome {
        Ok(result) => (200, serde_json::to_value(&**result).unwrap_or_default()),
        Err(error) => {
            let error = ApiError::from(&**error);
            (error.status.as_u16(), error.body())
        }
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

/// Approvals over HTTP: park the call, say it waits (the pipeline records
/// `approval.requested`), and wait (bounded) for `POST …/approvals/<callId>`.
pub struct BoardApprover {
    /// Where the call parks.
    pub board: Arc<Board>,
    /// Raised when the call parks.
    pub signal: Arc<ParkSignal>,
    /// How long to wait before the approval expires.
    pub timeout: Duration,
    /// Who the call is made for (its session owner's auth), as listed.
    pub requested_by: Option<Value>,
}

impl Approver for BoardApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            let Some(parked) = self.board.park(
                &request.call_id,
                &request.tool_name,
                &request.session_id,
                Status::AwaitingApproval,
            ) else {
                return ApprovalDecision::Unavailable {
                    how: toolhost::Overloaded::TooManyWaiting {
                        max: self.board.max_waiting,
                    }
                    .to_string(),
                };
            };
            let (tx, rx) = oneshot::channel();
            *parked
                .approval
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(tx);
            self.board.share(&request.call_id, &parked).await;
            let expires_at = chrono::Utc::now()
                + chrono::Duration::from_std(self.timeout).unwrap_or(chrono::Duration::MAX);
            let asked = self.board.approvals.requested(
                request,
                self.requested_by.clone(),
                Some(expires_at),
            );
            self.board
                .share_approval(&request.call_id, Some(expires_at))
                .await;
            request.waiting(Some(expires_at));
            self.signal.raise(Status::AwaitingApproval);
            let decision = match tokio::time::timeout(self.timeout, rx).await {
                Ok(Ok(decision)) => decision,
                Ok(Err(_)) | Err(_) => {
                    parked
                        .approval
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take();
                    ApprovalDecision::Expired {
                        waited: self.timeout,
                    }
                }
            };
            asked.decided(&decision);
            self.board.share_approval(&request.call_id, None).await;
            self.board.set_status(&parked, Status::Running, None);
            decision
        })
    }
}

/// Custom tools over HTTP: park the call, emit `agent.custom_tool_use`, and
/// wait (bounded) for the client's `user.custom_tool_result`.
pub struct BoardCustomTools {
    /// Where the call parks.
    pub board: Arc<Board>,
    /// Raised when the call parks.
    pub signal: Arc<ParkSignal>,
    /// How long to wait for the result.
    pub timeout: Duration,
}

impl CustomToolRunner for BoardCustomTools {
    fn run<'a>(
        &'a self,
        session: &'a Session,
        request: &'a CustomToolUse,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>> {
        Box::pin(async move {
            let Some(parked) = self.board.park(
                &request.call_id,
                &request.tool_name,
                &request.session_id,
                Status::AwaitingCustomToolResult,
            ) else {
                return Err(CallError::Overloaded(
                    toolhost::Overloaded::TooManyWaiting {
                        max: self.board.max_waiting,
                    },
                ));
            };
            let (tx, rx) = oneshot::channel();
            *parked.answer.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
            self.board.share(&request.call_id, &parked).await;
            // Awaited: the client learns of the call only from this event.
            let told = session
                .events()
                .append(
                    EventKind::CustomToolUse,
                    EventData::Json(json!({
                        "customToolUseId": request.call_id,
                        "callId": request.call_id,
                        "name": request.tool_name,
                        "input": request.input,
                        "sessionId": request.session_id,
                    })),
                )
                .await;
            if let Err(e) = told {
                parked
                    .answer
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                self.board.set_status(&parked, Status::Running, None);
                return Err(CallError::StateUnavailable {
                    tool: request.tool_name.clone(),
                    reason: format!("its `agent.custom_tool_use` event was not recorded: {e}"),
                });
            }
            self.signal.raise(Status::AwaitingCustomToolResult);
            let output = match tokio::time::timeout(self.timeout, rx).await {
                Ok(Ok(output)) => output,
                Ok(Err(_)) | Err(_) => {
                    parked
                        .answer
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take();
                    ToolOutput::text(
                        format!(
                            "custom tool `{}` got no result: the client did not post a \
                             user.custom_tool_result within {} s",
                            request.tool_name,
                            self.timeout.as_secs()
                        ),
                        true,
                    )
                }
            };
            self.board.set_status(&parked, Status::Running, None);
            Ok(output)
        })
    }
}

/// The answer to a question a call asked.
#[derive(Debug)]
pub enum Answered {
    /// The user's, to an elicitation.
    Elicitation(ElicitAnswer),
    /// The model's, to a sampling request.
    Sampling(SamplingResult),
}

/// Questions over HTTP: park the call, emit `agent.elicitation` or
/// `agent.sampling` in its session, and wait for the client's
/// `user.elicitation_result` or `user.sampling_result` (the host bounds
/// the wait with `ask_timeout_ms`).
pub struct BoardAsker {
    /// Where the call parks.
    pub board: Arc<Board>,
    /// Raised when the call parks.
    pub signal: Arc<ParkSignal>,
    /// The call's session, where the question is emitted.
    pub session: Arc<Session>,
}

/// Puts a parked call back to running when its question ends, answered or
/// not (the host drops the wait at `ask_timeout_ms`).
struct Asking<'a> {
    board: &'a Board,
    parked: Arc<Parked>,
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        self.parked
            .asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        self.board.set_status(&self.parked, Status::Running, None);
    }
}

impl BoardAsker {
    /// Park `call_id` as `status`, emit `kind` with `data`, and wait for
    /// the answer.
    async fn ask(
        &self,
        call_id: &str,
        tool: &str,
        status: Status,
        kind: EventKind,
        data: serde_json::Value,
    ) -> Result<Answered, AskError> {
        let Some(parked) = self.board.park(call_id, tool, self.session.id(), status) else {
            return Err(AskError::Unavailable(
                toolhost::Overloaded::TooManyWaiting {
                    max: self.board.max_waiting,
                }
                .to_string(),
            ));
        };
        let (tx, rx) = oneshot::channel();
        *parked.asked.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
        self.board.share(call_id, &parked).await;
        let _asking = Asking {
            board: &self.board,
            parked,
        };
        // Awaited: the client learns of the question only from this event.
        self.session
            .events()
            .append(kind, EventData::Json(data))
            .await
            .map_err(|e| {
                AskError::Unavailable(format!("the question's event was not recorded: {e}"))
            })?;
        self.signal.raise(status);
        rx.await
            .map_err(|_| AskError::Failed("the question was dropped unanswered".into()))
    }
}

impl Asker for BoardAsker {
    fn elicit<'a>(
        &'a self,
        question: &'a Elicitation,
    ) -> BoxFuture<'a, Result<ElicitAnswer, AskError>> {
        Box::pin(async move {
            let data = json!({
                "callId": question.call_id,
                "toolName": question.tool,
                "message": question.message,
                "requestedSchema": question.requested_schema,
                "sessionId": self.session.id(),
            });
            let status = Status::AwaitingElicitationResult;
            match self
                .ask(
                    &question.call_id,
                    &question.tool,
                    status,
                    EventKind::Elicitation,
                    data,
                )
                .await?
            {
                Answered::Elicitation(answer) => Ok(answer),
                Answered::Sampling(_) => Err(AskError::Failed(
                    "a sampling result answered an elicitation".into(),
                )),
            }
        })
    }

    fn sample<'a>(
        &'a self,
        question: &'a Sampling,
    ) -> BoxFuture<'a, Result<SamplingResult, AskError>> {
        Box::pin(async move {
            let data = json!({
                "callId": question.call_id,
                "toolName": question.tool,
                "messages": question.messages,
                "options": question.options,
                "sessionId": self.session.id(),
            });
            let status = Status::AwaitingSamplingResult;
            match self
                .ask(
                    &question.call_id,
                    &question.tool,
                    status,
                    EventKind::Sampling,
                    data,
                )
                .await?
            {
                Answered::Sampling(answer) => Ok(answer),
                Answered::Elicitation(_) => Err(AskError::Failed(
                    "an elicitation result answered a sampling request".into(),
                )),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_waiting_cap_is_the_boards_own() {
        let board = Board::with_max_waiting(2);
        for n in 0..2 {
            assert!(
                board
                    .park(&format!("call_{n}"), "t", "s", Status::AwaitingApproval)
                    .is_some()
            );
        }
        assert!(
            board
                .park("call_2", "t", "s", Status::AwaitingCustomToolResult)
                .is_none()
        );
    }

    #[test]
    fn a_call_that_stops_waiting_frees_its_place_at_once() {
        let board = Board::with_max_waiting(1);
        let parked = board
            .park("call_a", "t", "s", Status::AwaitingApproval)
            .expect("room for one");
        assert!(
            board
                .park("call_b", "t", "s", Status::AwaitingApproval)
                .is_none()
        );
        board.set_status(&parked, Status::Running, None);
        assert_eq!(board.waiting.load(Ordering::Relaxed), 0);
        assert!(
            board
                .park("call_b", "t", "s", Status::AwaitingCustomToolResult)
                .is_some(),
            "approved or answered, a call no longer counts as waiting"
        );
        board.set_status(&parked, Status::Running, None);
        assert_eq!(board.waiting.load(Ordering::Relaxed), 1, "counted once");
    }

    #[test]
    fn a_full_board_refuses_one_more_waiting_call_and_forgets_gone_sessions() {
        let board = Board::default();
        for n in 0..MAX_WAITING_CALLS {
            let session = if n == 0 { "gone" } else { "kept" };
            let parked = board.park(&format!("call_{n}"), "t", session, Status::AwaitingApproval);
            assert!(parked.is_some(), "call {n} parks");
        }
        assert!(
            board
                .park("call_more", "t", "kept", Status::AwaitingApproval)
                .is_none()
        );
        assert!(
            board.park("call_1", "t", "kept", Status::Running).is_some(),
            "a call already parked moves on"
        );
        let outcome: Outcome = Err(Arc::new(CallError::Internal(anyhow::anyhow!("x"))));
        board.finish("call_0", &outcome);
        assert!(
            board
                .park("call_more", "t", "kept", Status::AwaitingApproval)
                .is_some(),
            "a finished call frees its place"
        );
        board.forget_sessions(&["gone".to_string()]);
        assert!(board.get("call_0").is_none(), "finished with its session");
        assert!(board.get("call_2").is_some());
    }
}
