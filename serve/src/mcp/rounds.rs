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
    CreateMessageResult, ElicitRequest, ElicitRequestParams, ElicitResult, ErrorData, InputRequest,
    InputRequiredResult, InputResponses, RequestStateCodec, SealOptions,
};
use rmcp::service::Peer;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

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

/// What a running call tells the request waiting on it.
pub enum Event {
    /// It asked the client something and waits for the answer.
    Asked(Question),
    /// It needs a capability the client did not declare.
    Missing(ClientCapabilities),
    /// It finished: the request's answer.
    Finished(Result<CallToolResponse, ErrorData>),
}

/// A question a call waits on.
pub struct Question {
    /// Its key in `inputRequests`: the call's n-th question is `ask-<n>`.
    key: String,
    request: InputRequest,
    answer: oneshot::Sender<Value>,
}

/// One call's side of its rounds: where its questions go.
pub struct CallRounds {
    events: mpsc::Sender<Event>,
    asked: AtomicU32,
    /// How long one question waits for its answer: `ask_timeout_ms`. The
    /// host bounds a tool's questions so too; this bounds an approval's.
    wait: Duration,
}

impl CallRounds {
    /// The rounds of a call that is about to start, whose questions wait
    /// at most `wait` each, and the receiving end of what it tells.
    pub fn new(wait: Duration) -> (Arc<Self>, mpsc::Receiver<Event>) {
        // A call asks one question at a time and finishes once; a question
        // left unanswered past its timeout may be followed by another.
        let (events, received) = mpsc::channel(4);
        let rounds = Arc::new(Self {
            events,
            asked: AtomicU32::new(0),
            wait,
        });
        (rounds, received)
    }

    /// The call finished with `response`.
    pub async fn finish(&self, response: Result<CallToolResponse, ErrorData>) {
        let _ = self.events.send(Event::Finished(response)).await;
    }

    async fn ask(&self, request: InputRequest) -> Result<Value, String> {
        let number = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        let (answer, answered) = oneshot::channel();
        let question = Question {
            key: format!("ask-{number}"),
            request,
            answer,
        };
        self.events
            .send(Event::Asked(question))
            .await
            .map_err(|_| "nobody waits for this call any more".to_string())?;
        match tokio::time::timeout(self.wait, answered).await {
            Ok(Ok(answer)) => Ok(answer),
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
    /// The question the client was last asked.
    question: Mutex<Option<Question>>,
    /// What the call tells; locked by the request waiting on it.
    events: tokio::sync::Mutex<mpsc::Receiver<Event>>,
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
        }
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
    pub async fn start<F>(
        self: &Arc<Self>,
        binding: Vec<u8>,
        rounds: Arc<CallRounds>,
        mut events: mpsc::Receiver<Event>,
        run: F,
        cancelled: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData>
    where
        F: Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'static,
    {
        let mut run = Box::pin(run);
        let question = loop {
            let event = tokio::select! {
                // The call first: one that is done at once registers no
                // waker with the cancellation token.
                biased;
                response = &mut run => return response,
                event = events.recv() => event,
                // Dropping the call stops the tool where it is.
                () = cancelled.cancelled() => {
                    return Err(ErrorData::internal_error("the call was cancelled", None));
                }
            };
            match event {
                Some(Event::Asked(question)) if self.lock().len() >= self.max_waiting => {
                    // Full: the question fails at once (dropping it tells
                    // the call), and the call goes on in this request.
                    tracing::warn!(
                        max = self.max_waiting,
                        "an MCP call's question was refused: as many calls wait as may"
                    );
                    drop(question);
                }
                Some(Event::Asked(question)) => break question,
                Some(Event::Missing(required)) => {
                    return Err(ErrorData::missing_required_client_capability(required));
                }
                // Only the task below tells `Finished`, and `rounds` keeps
                // the channel open.
                Some(Event::Finished(response)) => return response,
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
            question: Mutex::default(),
            events: tokio::sync::Mutex::new(events),
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
        Ok(self.ask_again(&id, &waiting, question))
    }

    /// A retry: verify its `state` against `binding`, give the waiting call
    /// the answer in `responses`, and wait for what it tells next.
    pub async fn resume(
        &self,
        state: &str,
        binding: &[u8],
        responses: Option<InputResponses>,
        cancelled: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let refused = |why: String| {
            ErrorData::invalid_params(
                format!("requestState refused: {why}"),
                Some(json!({ "code": "invalid_request_state" })),
            )
        };
        let opened: State = self.codec.open_json_with(state, binding).map_err(|e| {
            refused(format!(
                "{e} (it must be echoed unchanged, with the same tool, arguments and caller)"
            ))
        })?;
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
        let question = waiting
            .question
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(question) = question else {
            return Err(refused("the call is not waiting for an answer".into()));
        };
        let answer = responses.and_then(|mut responses| responses.remove(&question.key));
        match answer {
            Some(answer) => {
                let _ = question.answer.send(answer);
            }
            // Asked again, under a fresh state.
            None => return Ok(self.ask_again(&opened.call, &waiting, question)),
        }
        self.next_round(&opened.call, &waiting, cancelled).await
    }

    /// Wait for what the call tells next and answer the request with it.
    async fn next_round(
        &self,
        id: &str,
        waiting: &Arc<Waiting>,
        cancelled: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let event = {
            let mut events = waiting.events.lock().await;
            tokio::select! {
                event = events.recv() => event,
                () = cancelled.cancelled() => {
                    self.end(id, waiting);
                    return Err(ErrorData::internal_error("the call was cancelled", None));
                }
            }
        };
        match event {
            Some(Event::Asked(question)) => Ok(self.ask_again(id, waiting, question)),
            Some(Event::Missing(required)) => {
                self.end(id, waiting);
                Err(ErrorData::missing_required_client_capability(required))
            }
            Some(Event::Finished(response)) => {
                self.lock().remove(id);
                response
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

    /// Answer the request with `question` under a state for a new round.
    fn ask_again(&self, id: &str, waiting: &Waiting, question: Question) -> CallToolResponse {
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
        let requests = BTreeMap::from([(question.key.clone(), question.request.clone())]);
        *waiting.nonce.lock().unwrap_or_else(PoisonError::into_inner) = Some(nonce);
        *waiting
            .question
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(question);
        InputRequiredResult::new(Some(requests), Some(sealed)).into()
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

/// What binds a request state to its request: the caller, the tool and its
/// arguments (their SHA-256), each length-prefixed.
pub fn binding(caller: Option<&Value>, tool: &str, arguments: &Value) -> Vec<u8> {
    let caller = caller.map(Value::to_string).unwrap_or_default();
    let arguments = Sha256::digest(arguments.to_string().as_bytes());
    let mut bound = Vec::new();
    for part in [caller.as_bytes(), tool.as_bytes(), arguments.as_slice()] {
        bound.extend_from_slice(&(part.len() as u64).to_be_bytes());
        bound.extend_from_slice(part);
    }
    bound
}
