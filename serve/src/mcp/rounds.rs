//! Input-required rounds (MCP 2026-07-28, SEP-2322): how a 2026-07-28
//! client is asked what a running call needs — a tool's question, an
//! approval — when the server may send it no request of its own.
//!
//! The call runs on in a task of its own. When it asks, the request waiting
//! on it answers with an `InputRequiredResult`: the question as an input
//! request, and a `requestState` that names the call. The client answers on
//! a retry of the same request with `inputResponses` and that state; the
//! retry hands the answer to the waiting call (the tool is never run again)
//! and answers with the call's next question or its result.
//!
//! The state is sealed with rmcp's request-state codec (HMAC-SHA256, signed
//! not encrypted: it holds only the call's id and a nonce), bound to the
//! caller, the tool and its arguments, expiring with the question
//! (`ask_timeout_ms`), and usable once: each round's nonce is taken by the
//! first retry that shows it. A call waits between rounds at most as long
//! as a question may wait; the host's asking slots bound how many do.
//!
//! In a fleet, every server signs states under one key and a retry that
//! lands where its call does not wait is relayed to the server where it
//! does ([`super::fleet_rounds`]).

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks sampling deprecated (SEP-2577): 2026-07-28 deprecates it and \
              still defines it, and sessions up to 2025-11-25 have it"
)]

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolResponse, ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequest, ElicitRequestParams, ElicitResult, ErrorData,
    GetPromptResponse, InputRequest, InputRequiredResult, InputResponses, ListRootsRequest,
    ListRootsResult, RequestStateCodec, SealOptions,
};
use rmcp::service::Peer;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use toolhost::config::TaskSupport;

use super::events::{Event, Reply, Round, fits};
use super::fleet_rounds::{FleetRounds, Message, Relayed, Retry};
use super::tasks::{Plan, Reservation};

/// How a call's questions reach the client that made it.
#[derive(Clone)]
pub enum Via {
    /// A session (up to 2025-11-25): requests the server sends the client.
    Session(Peer<RoleServer>),
    /// A 2026-07-28 request: input-required rounds.
    Rounds(Arc<CallRounds>),
}

impl Via {
    /// Ask the client's user to fill in a form.
    pub async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, String> {
        match self {
            Self::Session(peer) => peer
                .create_elicitation(params)
                .await
                .map_err(|e| e.to_string()),
            Self::Rounds(rounds) => {
                let request = InputRequest::Elicitation(ElicitRequest::new(params));
                let answer = rounds.ask(request).await?;
                serde_json::from_value(answer)
                    .map_err(|e| format!("the answer is not an elicitation result: {e}"))
            }
        }
    }

    /// Ask the client's model for a message.
    pub async fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, String> {
        match self {
            Self::Session(peer) => peer.create_message(params).await.map_err(|e| e.to_string()),
            Self::Rounds(rounds) => {
                let request = InputRequest::CreateMessage(CreateMessageRequest::new(params));
                let answer = rounds.ask(request).await?;
                serde_json::from_value(answer)
                    .map_err(|e| format!("the answer is not a sampling result: {e}"))
            }
        }
    }

    /// Ask the client for its roots.
    pub async fn roots(&self) -> Result<ListRootsResult, String> {
        match self {
            Self::Session(peer) => peer.list_roots().await.map_err(|e| e.to_string()),
            Self::Rounds(rounds) => {
                let request = InputRequest::ListRoots(ListRootsRequest::default());
                let answer = rounds.ask(request).await?;
                serde_json::from_value(answer)
                    .map_err(|e| format!("the answer is not a roots list: {e}"))
            }
        }
    }

    /// The client did not declare `required`: a 2026-07-28 request ends
    /// with MissingRequiredClientCapability (and this never returns); a
    /// session's question is refused with `refusal`.
    pub async fn undeclared(&self, required: ClientCapabilities, refusal: &str) -> String {
        if let Self::Rounds(rounds) = self {
            let _ = rounds.events.send(Event::Missing(required)).await;
            std::future::pending::<()>().await;
        }
        refusal.to_string()
    }
}

/// What a request that runs a call (or a prompt) in rounds is answered
/// with: the next round, or what the call finished with.
pub enum Step {
    /// The call asks: the client answers on a retry.
    Asked(InputRequiredResult),
    /// The call finished.
    Finished(Reply),
    /// The call became a task (the Tasks extension): the client polls it.
    Task(CallToolResponse),
}

impl Step {
    /// The step as a tool call's response.
    pub fn into_call(self) -> Result<CallToolResponse, ErrorData> {
        match self {
            Self::Asked(round) => Ok(round.into()),
            Self::Finished(Reply::Call { response, .. }) | Self::Task(response) => Ok(response),
            Self::Finished(Reply::Prompt(_)) => Err(crossed()),
        }
    }

    /// The step as a prompt's response.
    pub fn into_prompt(self) -> Result<GetPromptResponse, ErrorData> {
        match self {
            Self::Asked(round) => Ok(round.into()),
            Self::Finished(Reply::Prompt(response)) => Ok(response),
            Self::Finished(Reply::Call { .. }) | Self::Task(_) => Err(crossed()),
        }
    }
}

/// A retry whose state is refused, saying `why`.
fn refused(why: String) -> ErrorData {
    ErrorData::invalid_params(
        format!("requestState refused: {why}"),
        Some(json!({ "code": "invalid_request_state" })),
    )
}

/// A request answered with another kind of request's answer: its state's
/// binding names the method, so only a bug gets here.
fn crossed() -> ErrorData {
    ErrorData::internal_error("the request state belongs to another kind of request", None)
}

/// One call's side of its rounds: where its questions go.
pub struct CallRounds {
    events: mpsc::Sender<Event>,
    asked: AtomicU32,
    /// How long one question waits for its answer: `ask_timeout_ms`. The
    /// host bounds a tool's questions so too; this bounds an approval's.
    wait: Duration,
    /// Answers the call's first request brought before anything was asked
    /// (its `inputResponses`): a tool's question under one of their keys
    /// is answered from here, once.
    given: Mutex<InputResponses>,
}

impl CallRounds {
    /// The rounds of a call that is about to start, whose questions wait
    /// at most `wait` each, with the answers its request brought, and the
    /// receiving end of what it tells.
    pub fn new(wait: Duration, given: InputResponses) -> (Arc<Self>, mpsc::Receiver<Event>) {
        // A call asks one round at a time and finishes once; a round left
        // unanswered past its timeout may be followed by another.
        let (events, received) = mpsc::channel(4);
        let rounds = Arc::new(Self {
            events,
            asked: AtomicU32::new(0),
            wait,
            given: Mutex::new(given),
        });
        (rounds, received)
    }

    /// The call finished with `response`.
    pub async fn finish(&self, response: Result<Reply, ErrorData>) {
        let _ = self.events.send(Event::Finished(response)).await;
    }

    /// Ask `request` under a key of the host's (`ask-<n>`), which no
    /// answer given in advance can match: approvals and unnamed questions.
    async fn ask(&self, request: InputRequest) -> Result<Value, String> {
        let number = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        let key = format!("ask-{number}");
        let questions = BTreeMap::from([(key.clone(), request)]);
        let mut answers = self.ask_round(false, questions, BTreeMap::new()).await?;
        answers
            .remove(&key)
            .ok_or_else(|| "the round ended without its answer".to_string())
    }

    /// Ask the tool's `questions`, named by the tool, in one round: those
    /// the call's first request answered already are answered from there.
    pub async fn ask_named(
        &self,
        questions: BTreeMap<String, InputRequest>,
    ) -> Result<BTreeMap<String, Value>, String> {
        let answered: BTreeMap<String, Value> = {
            let mut given = self.given.lock().unwrap_or_else(PoisonError::into_inner);
            questions
                .iter()
                .filter_map(|(key, request)| {
                    let answer = given.remove(key).filter(|answer| fits(request, answer))?;
                    Some((key.clone(), answer))
                })
                .collect()
        };
        if answered.len() == questions.len() {
            return Ok(answered);
        }
        self.ask_round(true, questions, answered).await
    }

    async fn ask_round(
        &self,
        named: bool,
        questions: BTreeMap<String, InputRequest>,
        answered: BTreeMap<String, Value>,
    ) -> Result<BTreeMap<String, Value>, String> {
        let (answer, answers) = oneshot::channel();
        let round = Round {
            named,
            questions,
            answered,
            answer,
        };
        self.events
            .send(Event::Asked(round))
            .await
            .map_err(|_| "nobody waits for this call any more".to_string())?;
        match tokio::time::timeout(self.wait, answers).await {
            Ok(Ok(answers)) => Ok(answers),
            Ok(Err(_)) => Err(
                "the question was dropped unanswered (the server holds as many \
                               waiting calls as it may)"
                    .to_string(),
            ),
            Err(_) => Err(format!(
                "no answer came within {} s (`[limits] ask_timeout_ms`)",
                self.wait.as_secs()
            )),
        }
    }
}

/// What a sealed request state holds: which call, and which of its rounds.
#[derive(Serialize, Deserialize)]
struct State {
    call: String,
    nonce: String,
}

/// A call waiting between rounds (or running between them).
struct Waiting {
    /// What a retry must name again: the caller, the tool, its arguments.
    binding: Vec<u8>,
    /// The nonce the next retry must show; taken by the first that does.
    nonce: Mutex<Option<String>>,
    /// The round the client was last asked.
    round: Mutex<Option<Round>>,
    /// What the call tells; locked by the request waiting on it (or by its
    /// task, once it is one).
    events: Arc<tokio::sync::Mutex<mpsc::Receiver<Event>>>,
    task: Mutex<Option<AbortHandle>>,
}

/// The 2026-07-28 calls of one server that are between rounds, and the
/// codec their request states are sealed with.
pub struct Suspended {
    calls: Mutex<HashMap<String, Arc<Waiting>>>,
    codec: RequestStateCodec,
    /// How long a round's state verifies: as long as a question may wait.
    ttl: Duration,
    /// How many calls may wait between rounds at once (`[server]
    /// max_waiting_calls`); a question past it is refused at once.
    max_waiting: usize,
    /// The fleet's store, through which retries that land on other
    /// servers reach this one's calls, and this one's reach theirs.
    fleet: Option<Arc<FleetRounds>>,
}

impl Suspended {
    /// Calls of this process, at most `max_waiting` at once, whose states
    /// are sealed under a key of its own (random: a state verifies only
    /// where its call waits, and no longer than the process) and expire
    /// after `ttl`.
    pub fn for_process(ttl: Duration, max_waiting: usize) -> Self {
        let key: Vec<u8> = [uuid::Uuid::new_v4(), uuid::Uuid::new_v4()]
            .iter()
            .flat_map(|random| random.as_bytes().to_vec())
            .collect();
        Self {
            calls: Mutex::default(),
            codec: RequestStateCodec::try_new(key).expect("32 random bytes are a valid key"),
            ttl,
            max_waiting,
            fleet: None,
        }
    }

    /// The same calls, shared with a fleet through `fleet`: states are
    /// sealed under `key`, which every server of the fleet holds.
    pub fn shared(mut self, fleet: Arc<FleetRounds>, key: [u8; 32]) -> Self {
        self.codec = RequestStateCodec::try_new(key.to_vec()).expect("32 bytes are a valid key");
        self.fleet = Some(fleet);
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Waiting>>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Run `run`, a call whose questions go through `rounds` (telling
    /// `events`), for a request bound to `binding`, until it finishes or
    /// first asks. Most calls never ask: they run in the request, as a
    /// session's do. A call that asks moves to a task of its own, so it
    /// outlives the request, and waits among the suspended; the request is
    /// answered with its question. A cancelled request stops the call.
    ///
    /// With a task `plan` the call may become a task instead
    /// ([`super::tasks`]): at once when the tool requires it, when it runs
    /// past the plan's time, or when it asks a question it did not name.
    pub async fn start<F>(
        self: &Arc<Self>,
        binding: Vec<u8>,
        rounds: Arc<CallRounds>,
        mut events: mpsc::Receiver<Event>,
        run: F,
        mut plan: Option<Plan>,
        cancelled: &CancellationToken,
    ) -> Result<Step, ErrorData>
    where
        F: Future<Output = Result<Reply, ErrorData>> + Send + 'static,
    {
        let mut run = Box::pin(run);
        if let Some(required) = plan.take_if(|p| p.support == TaskSupport::Required) {
            let reservation = required.tasks.reserve(&required.owner).ok_or_else(|| {
                ErrorData::internal_error(
                    "every place for a task on this server is taken by a running one \
                     (`[server] max_tasks`); try again later",
                    Some(json!({ "code": "too_many_tasks" })),
                )
            })?;
            return Ok(to_task(&required, reservation, run, rounds, events, None).await);
        }
        let mut later = std::pin::pin!(later(plan.as_ref().map(|p| p.after)));
        let round = loop {
            let event = tokio::select! {
                // The call first: one that is done at once registers no
                // waker with the cancellation token.
                biased;
                response = &mut run => return response.map(Step::Finished),
                event = events.recv() => event,
                () = &mut later, if plan.is_some() => {
                    // Still running: a task, unless every place is taken.
                    if let Some((plan, reservation)) = reserve(plan.take()) {
                        return Ok(to_task(&plan, reservation, run, rounds, events, None).await);
                    }
                    continue;
                }
                // Dropping the call stops the tool where it is.
                () = cancelled.cancelled() => {
                    return Err(ErrorData::internal_error("the call was cancelled", None));
                }
            };
            match event {
                // A question it did not name: a task's, unless every place
                // is taken (then it stays in rounds, and a task no more).
                Some(Event::Asked(round)) if !round.named() && plan.is_some() => {
                    if let Some((plan, reservation)) = reserve(plan.take()) {
                        let asked = Some(round);
                        return Ok(to_task(&plan, reservation, run, rounds, events, asked).await);
                    }
                    if self.lock().len() < self.max_waiting {
                        break round;
                    }
                    tracing::warn!(
                        max = self.max_waiting,
                        "an MCP call's question was refused: as many calls wait as may"
                    );
                    drop(round);
                }
                Some(Event::Asked(round)) if self.lock().len() >= self.max_waiting => {
                    // Full: the round fails at once (dropping it tells
                    // the call), and the call goes on in this request.
                    tracing::warn!(
                        max = self.max_waiting,
                        "an MCP call's question was refused: as many calls wait as may"
                    );
                    drop(round);
                }
                Some(Event::Asked(round)) => break round,
                Some(Event::Missing(required)) => {
                    return Err(ErrorData::missing_required_client_capability(required));
                }
                // Only the task below tells `Finished`, and `rounds` keeps
                // the channel open.
                Some(Event::Finished(response)) => return response.map(Step::Finished),
                None => {
                    return Err(ErrorData::internal_error(
                        "the call ended without a result",
                        None,
                    ));
                }
            }
        };
        let id = uuid::Uuid::new_v4().to_string();
        let waiting = Arc::new(Waiting {
            binding,
            nonce: Mutex::default(),
            round: Mutex::default(),
            events: Arc::new(tokio::sync::Mutex::new(events)),
            task: Mutex::default(),
        });
        self.lock().insert(id.clone(), waiting.clone());
        let task = tokio::spawn({
            let (suspended, waiting, id, ttl) =
                (self.clone(), waiting.clone(), id.clone(), self.ttl);
            async move {
                let response = run.await;
                let _ = tokio::time::timeout(ttl, rounds.finish(response)).await;
                // Nobody waits on it (its client never came back): forget it.
                if waiting.events.try_lock().is_ok() {
                    suspended.lock().remove(&id);
                }
            }
        });
        *waiting.task.lock().unwrap_or_else(PoisonError::into_inner) = Some(task.abort_handle());
        let asked = self.ask_again(&id, &waiting, round);
        if let Some(fleet) = &self.fleet
            && let Some(lease) = fleet.hold(&id).await
        {
            tokio::spawn(self.clone().serve_retries(fleet.clone(), id, lease));
        }
        Ok(Step::Asked(asked))
    }

    /// Answer the retries other servers of the fleet relay to call `id`,
    /// each as a retry of its own is, while the call waits here; then let
    /// `lease` go.
    async fn serve_retries(
        self: Arc<Self>,
        fleet: Arc<FleetRounds>,
        id: String,
        lease: toolhost::redis_store::lease::Lease,
    ) {
        let mut woken = fleet.watch(&id);
        let mut reread = tokio::time::interval(fleet.reread());
        let mut running = tokio::task::JoinSet::new();
        let mut cancels: HashMap<String, CancellationToken> = HashMap::new();
        loop {
            tokio::select! {
                _ = woken.recv() => {}
                _ = reread.tick() => {}
                Some(_) = running.join_next() => {}
                () = lease.lost() => break,
            }
            for message in fleet.take(&id).await {
                match message {
                    Message::Retry(retry) => {
                        let cancelled = CancellationToken::new();
                        cancels.insert(retry.reply.clone(), cancelled.clone());
                        let (suspended, fleet) = (self.clone(), fleet.clone());
                        running.spawn(async move {
                            let relayed =
                                suspended.answer_relayed(&fleet, &retry, &cancelled).await;
                            fleet.reply(&retry.reply, &relayed).await;
                        });
                    }
                    Message::Cancel { reply } => {
                        if let Some(cancelled) = cancels.remove(&reply) {
                            cancelled.cancel();
                        }
                    }
                }
            }
            cancels.retain(|_, cancelled| !cancelled.is_cancelled());
            if running.is_empty() && !self.lock().contains_key(&id) {
                break;
            }
        }
        running.abort_all();
        lease.release().await;
    }

    /// What a retry relayed from another server is answered with.
    async fn answer_relayed(
        &self,
        fleet: &FleetRounds,
        retry: &Retry,
        cancelled: &CancellationToken,
    ) -> Relayed {
        use base64::Engine as _;
        let Ok(binding) = base64::engine::general_purpose::STANDARD.decode(&retry.binding) else {
            return Relayed::Failed(ErrorData::invalid_params(
                "a relayed binding is not base64",
                None,
            ));
        };
        let plan = retry.task.clone().map(|terms| fleet.plan(terms));
        let step = self
            .resume_here(
                &retry.state,
                &binding,
                retry.responses.clone(),
                plan,
                cancelled,
            )
            .await;
        match step {
            Ok(Step::Asked(round)) => Relayed::Asked(round),
            Ok(Step::Finished(Reply::Call { response, .. }) | Step::Task(response)) => {
                match response {
                    CallToolResponse::Complete(result) => Relayed::Called(result),
                    CallToolResponse::InputRequired(round) => Relayed::Asked(round),
                    CallToolResponse::Task(task) => Relayed::Task(task),
                    _ => Relayed::Failed(ErrorData::internal_error(
                        "the call ended with an answer of a kind the fleet cannot relay",
                        None,
                    )),
                }
            }
            Ok(Step::Finished(Reply::Prompt(response))) => match response {
                GetPromptResponse::Complete(result) => Relayed::Prompted(result),
                GetPromptResponse::InputRequired(round) => Relayed::Asked(round),
                _ => Relayed::Failed(ErrorData::internal_error(
                    "the prompt ended with an answer of a kind the fleet cannot relay",
                    None,
                )),
            },
            Err(error) => Relayed::Failed(error),
        }
    }

    /// A retry: verify its `state` against `binding`, give the waiting call
    /// the answer in `responses`, and wait for what it tells next. In a
    /// fleet, a retry of a call that waits on another server is relayed
    /// there.
    pub async fn resume(
        &self,
        state: &str,
        binding: &[u8],
        responses: Option<InputResponses>,
        plan: Option<Plan>,
        cancelled: &CancellationToken,
    ) -> Result<Step, ErrorData> {
        let Some(fleet) = &self.fleet else {
            return self
                .resume_here(state, binding, responses, plan, cancelled)
                .await;
        };
        let call = self.open(state, binding)?.call;
        if self.lock().contains_key(&call) {
            return self
                .resume_here(state, binding, responses, plan, cancelled)
                .await;
        }
        use base64::Engine as _;
        let retry = Retry {
            reply: uuid::Uuid::new_v4().simple().to_string(),
            state: state.to_string(),
            binding: base64::engine::general_purpose::STANDARD.encode(binding),
            responses,
            task: FleetRounds::terms(plan),
        };
        match fleet.relay(&call, retry, cancelled).await? {
            Relayed::Asked(round) => Ok(Step::Asked(round)),
            Relayed::Called(result) => Ok(Step::Finished(Reply::Call {
                response: result.into(),
                failure: None,
            })),
            Relayed::Prompted(result) => Ok(Step::Finished(Reply::Prompt(result.into()))),
            Relayed::Task(task) => Ok(Step::Task(task.into())),
            Relayed::Failed(error) => Err(error),
        }
    }

    /// What a request `state` bound to `binding` holds, if it verifies.
    fn open(&self, state: &str, binding: &[u8]) -> Result<State, ErrorData> {
        self.codec.open_json_with(state, binding).map_err(|e| {
            refused(format!(
                "{e} (it must be echoed unchanged, with the same tool, arguments and caller)"
            ))
        })
    }

    /// A retry of a call that waits on this server.
    async fn resume_here(
        &self,
        state: &str,
        binding: &[u8],
        responses: Option<InputResponses>,
        plan: Option<Plan>,
        cancelled: &CancellationToken,
    ) -> Result<Step, ErrorData> {
        let opened = self.open(state, binding)?;
        let waiting = self.lock().get(&opened.call).cloned().ok_or_else(|| {
            refused(
                "the call it belongs to is over (it was answered, its question timed out, \
                     or the server restarted)"
                    .into(),
            )
        })?;
        {
            let mut nonce = waiting.nonce.lock().unwrap_or_else(PoisonError::into_inner);
            if nonce.as_deref() != Some(opened.nonce.as_str()) {
                return Err(refused("it was used already".into()));
            }
            nonce.take();
        }
        // Set together with the nonce just taken.
        let round = waiting
            .round
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(mut round) = round else {
            return Err(refused("the call is not waiting for an answer".into()));
        };
        // Keys the round did not ask are ignored; an answer of the wrong
        // shape is asked for again.
        if !round.take(responses.unwrap_or_default()) {
            // What is still open is asked again, under a fresh state.
            return Ok(Step::Asked(self.ask_again(&opened.call, &waiting, round)));
        }
        round.finish();
        self.next_round(&opened.call, &waiting, plan, cancelled)
            .await
    }

    /// Wait for what the call tells next and answer the request with it;
    /// with a task `plan`, a call still running after the plan's time, or
    /// asking a question it did not name, becomes a task.
    async fn next_round(
        &self,
        id: &str,
        waiting: &Arc<Waiting>,
        mut plan: Option<Plan>,
        cancelled: &CancellationToken,
    ) -> Result<Step, ErrorData> {
        let mut later = std::pin::pin!(later(plan.as_ref().map(|p| p.after)));
        let event = loop {
            let mut events = waiting.events.lock().await;
            tokio::select! {
                event = events.recv() => break event,
                () = &mut later, if plan.is_some() => {
                    drop(events);
                    if let Some((plan, reservation)) = reserve(plan.take()) {
                        return Ok(Step::Task(self.become_task(id, waiting, &plan, reservation, None).await));
                    }
                }
                () = cancelled.cancelled() => {
                    self.end(id, waiting);
                    return Err(ErrorData::internal_error("the call was cancelled", None));
                }
            }
        };
        match event {
            Some(Event::Asked(round)) if !round.named() && plan.is_some() => match reserve(plan) {
                Some((plan, reservation)) => Ok(Step::Task(
                    self.become_task(id, waiting, &plan, reservation, Some(round))
                        .await,
                )),
                None => Ok(Step::Asked(self.ask_again(id, waiting, round))),
            },
            Some(Event::Asked(round)) => Ok(Step::Asked(self.ask_again(id, waiting, round))),
            Some(Event::Missing(required)) => {
                self.end(id, waiting);
                Err(ErrorData::missing_required_client_capability(required))
            }
            Some(Event::Finished(response)) => {
                self.lock().remove(id);
                response.map(Step::Finished)
            }
            None => {
                self.lock().remove(id);
                Err(ErrorData::internal_error(
                    "the call ended without a result",
                    None,
                ))
            }
        }
    }

    /// Answer the request with `round`'s open questions under a state for
    /// a new round.
    fn ask_again(&self, id: &str, waiting: &Waiting, round: Round) -> InputRequiredResult {
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let state = State {
            call: id.to_string(),
            nonce: nonce.clone(),
        };
        let options = SealOptions::new()
            .associated_data(&waiting.binding)
            .ttl(self.ttl);
        let sealed = self
            .codec
            .seal_json_with(&state, &options)
            .unwrap_or_default();
        let requests = round.open();
        *waiting.nonce.lock().unwrap_or_else(PoisonError::into_inner) = Some(nonce);
        *waiting.round.lock().unwrap_or_else(PoisonError::into_inner) = Some(round);
        InputRequiredResult::new(Some(requests), Some(sealed))
    }

    /// Hand a waiting call, which asks `asked` if anything, to a task.
    async fn become_task(
        &self,
        id: &str,
        waiting: &Waiting,
        plan: &Plan,
        reservation: Reservation,
        asked: Option<Round>,
    ) -> CallToolResponse {
        self.lock().remove(id);
        let call = waiting
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        plan.tasks
            .adopt(reservation, call, waiting.events.clone(), asked)
            .await
    }

    /// Stop the call and forget it.
    fn end(&self, id: &str, waiting: &Waiting) {
        if let Some(task) = waiting
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            task.abort();
        }
        self.lock().remove(id);
    }
}

/// Move a call still in its request into the task `reservation` holds
/// for `plan`: it runs on in a task of its own that tells `rounds` how it
/// finished, and the request is answered with the task.
async fn to_task<F>(
    plan: &Plan,
    reservation: Reservation,
    run: std::pin::Pin<Box<F>>,
    rounds: Arc<CallRounds>,
    events: mpsc::Receiver<Event>,
    asked: Option<Round>,
) -> Step
where
    F: Future<Output = Result<Reply, ErrorData>> + Send + 'static,
{
    let call = tokio::spawn(async move {
        let response = run.await;
        rounds.finish(response).await;
    });
    let events = Arc::new(tokio::sync::Mutex::new(events));
    let created = plan
        .tasks
        .adopt(reservation, Some(call.abort_handle()), events, asked)
        .await;
    Step::Task(created)
}

/// When a call becomes a task if it still runs: `after`, or never.
async fn later(after: Option<Duration>) {
    match after {
        Some(after) => tokio::time::sleep(after).await,
        None => std::future::pending().await,
    }
}

/// A place for a task of `plan`'s, if it has one and a place is free.
fn reserve(plan: Option<Plan>) -> Option<(Plan, Reservation)> {
    let plan = plan?;
    let reservation = plan.tasks.reserve(&plan.owner)?;
    Some((plan, reservation))
}

/// What binds a request state to its request: the caller, the method
/// (`tools/call`, `prompts/get`), the tool's or prompt's name and the
/// arguments (their SHA-256), each length-prefixed.
pub fn binding(caller: Option<&Value>, method: &str, name: &str, arguments: &Value) -> Vec<u8> {
    let caller = caller.map(Value::to_string).unwrap_or_default();
    let arguments = Sha256::digest(arguments.to_string().as_bytes());
    let mut bound = Vec::new();
    for part in [
        caller.as_bytes(),
        method.as_bytes(),
        name.as_bytes(),
        arguments.as_slice(),
    ] {
        bound.extend_from_slice(&(part.len() as u64).to_be_bytes());
        bound.extend_from_slice(part);
    }
    bound
}
