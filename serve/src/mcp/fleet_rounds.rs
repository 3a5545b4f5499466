//! Input-required rounds a fleet shares (`[state] backend = "redis"`): a
//! 2026-07-28 client's retry may land on any server, and reaches the call
//! waiting for it on the server that runs it. No affinity is needed.
//!
//! Every server of the fleet signs request states under one key derived
//! from the cluster key ([`Purpose::McpRequestState`]), so the server a
//! retry lands on verifies it (caller, tool, arguments, expiry) before it
//! sends anything on. The keys, under the store's prefix:
//!
//! - `mcproundowner:<call>`: a [`Lease`] the server where the call waits
//!   holds while it does; a retry for a call whose lease is gone is refused
//!   (its server stopped: the call is not run again anywhere);
//! - `mcproundinbox:<call>`: retries (and their cancels) other servers
//!   received for it, each sealed and bound to the call
//!   ([`Inbox`], [`Purpose::McpRoundMessage`]);
//! - `mcproundreply:<reply>`: what the call's server answered one relayed
//!   retry with (its next round, its result, its task, or an error), sealed
//!   ([`Purpose::McpRoundReply`]), kept until read and at most as long as a
//!   question may wait, and published on `mcproundreplyfeed`; one that
//!   does not verify is dropped, and the relay waits on.
//!
//! The call's server verifies the state again and takes the round's nonce
//! as it does for a retry of its own: a state is good once, fleet-wide.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CreateTaskResult, ErrorData, GetPromptResult, InputRequiredResult,
    InputResponses,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use toolhost::config::TaskSupport;
use toolhost::redis_store::RedisStore;
use toolhost::redis_store::feed::Wakeups;
use toolhost::redis_store::inbox::{Inbox, SendError};
use toolhost::redis_store::lease::{Lease, LeaseTerms};
use toolhost::redis_store::seal::Purpose;

use super::tasks::{Plan, Tasks};

/// The most retries waiting for one call; more are refused.
const INBOX_MAX: usize = 64;

/// How often a relayed retry reads its reply, and whether its call still
/// waits, without a wake-up.
const REREAD: Duration = Duration::from_secs(1);

/// Rounds in the fleet's store.
pub struct FleetRounds {
    store: Arc<RedisStore>,
    inbox: Inbox,
    replies: Arc<Wakeups>,
    terms: LeaseTerms,
    /// How long a reply is kept unread: as long as a question may wait.
    keep: Duration,
    /// This server's tasks: a relayed retry may make its call one.
    tasks: Arc<Tasks>,
}

/// What a server sends the server where a call waits.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Message {
    /// A client's retry, as it came.
    Retry(Retry),
    /// The client gave the retry up: stop the call.
    Cancel {
        /// The retry's reply id.
        reply: String,
    },
}

/// A client's retry of a call that waits on another server.
#[derive(Serialize, Deserialize)]
pub struct Retry {
    /// Where the answer goes: `mcproundreply:<reply>`.
    pub reply: String,
    /// The request state, as the client echoed it.
    pub state: String,
    /// What binds it to its request (hex): the caller, the method, the
    /// name and the arguments, as the receiving server saw them.
    pub binding: String,
    /// The client's answers.
    pub responses: Option<InputResponses>,
    /// The task the call may become, when the client declared tasks.
    pub task: Option<TaskTerms>,
}

/// A task plan, as another server sends it (the tasks are the receiver's).
#[derive(Clone, Serialize, Deserialize)]
pub struct TaskTerms {
    support: TaskSupport,
    after_ms: u64,
    owner: String,
}

/// What a relayed retry is answered with.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", content = "body", rename_all = "snake_case")]
pub enum Relayed {
    /// The call asks again.
    Asked(InputRequiredResult),
    /// The tool call finished.
    Called(CallToolResult),
    /// The prompt was made.
    Prompted(GetPromptResult),
    /// The call became a task.
    Task(CreateTaskResult),
    /// The retry failed.
    Failed(ErrorData),
}

/// Redis could not be asked: the request fails, naming it.
fn unreachable_store(reason: &str) -> ErrorData {
    ErrorData::internal_error(
        format!("the fleet's store did not answer: {reason}"),
        Some(json!({ "code": "state_unavailable" })),
    )
}

/// The call a retry names stopped waiting, or its server did.
fn over() -> ErrorData {
    ErrorData::invalid_params(
        "requestState refused: the call it belongs to is over (it was answered, its question \
         timed out, or the server running it stopped)",
        Some(json!({ "code": "invalid_request_state" })),
    )
}

impl FleetRounds {
    /// Rounds in `store`, a waiting call's server holding it under
    /// `terms`, replies kept `keep`, relayed tasks made in `tasks`.
    pub fn new(
        store: Arc<RedisStore>,
        terms: LeaseTerms,
        keep: Duration,
        tasks: Arc<Tasks>,
    ) -> Arc<Self> {
        let inbox = Inbox::new(
            store.clone(),
            "mcproundinbox",
            Purpose::McpRoundMessage,
            INBOX_MAX,
            keep,
        );
        let replies = Wakeups::new(store.clone(), store.key("mcproundreplyfeed", &[]), REREAD);
        Arc::new(Self {
            store,
            inbox,
            replies,
            terms,
            keep,
            tasks,
        })
    }

    /// The key every server of the fleet signs request states with.
    pub fn state_key(store: &RedisStore) -> [u8; 32] {
        store.seal().derived_key(Purpose::McpRequestState)
    }

    fn owner_key(&self, call: &str) -> String {
        self.store.key("mcproundowner", &[call])
    }

    fn reply_key(&self, reply: &str) -> String {
        self.store.key("mcproundreply", &[reply])
    }

    /// Hold `call` as the server where it waits.
    pub async fn hold(&self, call: &str) -> Option<Lease> {
        match Lease::acquire(&self.store, self.owner_key(call), self.terms).await {
            Ok(lease) => lease,
            Err(e) => {
                tracing::warn!(%call, "a waiting MCP call is not held in the fleet's store: {e}");
                None
            }
        }
    }

    /// Whether `call` waits on a server of the fleet.
    async fn waits(&self, call: &str) -> Result<bool, ErrorData> {
        redis::cmd("EXISTS")
            .arg(self.owner_key(call))
            .query_async(&mut self.store.connection())
            .await
            .map_err(|e| unreachable_store(&self.store.failure(&e)))
    }

    /// The task plan a relayed retry's `terms` give, on this server.
    pub fn plan(&self, terms: TaskTerms) -> Plan {
        Plan {
            tasks: self.tasks.clone(),
            support: terms.support,
            after: Duration::from_millis(terms.after_ms),
            owner: terms.owner,
        }
    }

    /// What a relayed retry with `plan` says of it.
    pub fn terms(plan: Option<Plan>) -> Option<TaskTerms> {
        plan.map(|plan| TaskTerms {
            support: plan.support,
            after_ms: u64::try_from(plan.after.as_millis()).unwrap_or(u64::MAX),
            owner: plan.owner,
        })
    }

    /// Woken when a retry for `call` may wait.
    pub fn watch(&self, call: &str) -> tokio::sync::broadcast::Receiver<()> {
        self.inbox.watch(call)
    }

    /// The retries and cancels waiting for `call`, oldest first.
    pub async fn take(&self, call: &str) -> Vec<Message> {
        self.inbox.take(call).await
    }

    /// How often a waiting call's inbox is read without a wake-up.
    pub fn reread(&self) -> Duration {
        self.inbox.reread()
    }

    /// Answer the relayed retry `reply` with `relayed`.
    pub async fn reply(&self, reply: &str, relayed: &Relayed) {
        let key = self.reply_key(reply);
        let sealed = self.store.seal().seal(
            Purpose::McpRoundReply,
            &key,
            "",
            &json!(relayed).to_string(),
        );
        let written = redis::pipe()
            .cmd("SET")
            .arg(&key)
            .arg(sealed)
            .arg("PX")
            .arg(
                u64::try_from(self.keep.as_millis())
                    .unwrap_or(u64::MAX)
                    .max(1),
            )
            .ignore()
            .publish(self.replies.channel(), reply)
            .ignore()
            .query_async::<()>(&mut self.store.connection())
            .await;
        if let Err(e) = written {
            tracing::warn!(%key, "a relayed MCP retry is not answered: {}", self.store.failure(&e));
        }
    }

    async fn take_reply(&self, reply: &str) -> Result<Option<Relayed>, ErrorData> {
        let key = self.reply_key(reply);
        let sealed: Option<String> = redis::cmd("GETDEL")
            .arg(&key)
            .query_async(&mut self.store.connection())
            .await
            .map_err(|e| unreachable_store(&self.store.failure(&e)))?;
        let Some(sealed) = sealed else {
            return Ok(None);
        };
        // One planted in its place is dropped: the real one is still to come.
        let opened = match self
            .store
            .seal()
            .open(Purpose::McpRoundReply, &key, "", &sealed)
        {
            Ok(opened) => opened,
            Err(e) => {
                tracing::warn!("a relayed MCP retry's answer is dropped: {e}");
                return Ok(None);
            }
        };
        serde_json::from_str(opened).map(Some).map_err(|e| {
            ErrorData::internal_error(format!("a relayed retry's answer is malformed: {e}"), None)
        })
    }

    /// Send `retry` of `call` to the server where the call waits, and wait
    /// for its answer: until it comes, the call's server stops holding it,
    /// or the request is `cancelled` (then the call is stopped too).
    pub async fn relay(
        &self,
        call: &str,
        retry: Retry,
        cancelled: &CancellationToken,
    ) -> Result<Relayed, ErrorData> {
        if !self.waits(call).await? {
            return Err(over());
        }
        let reply = retry.reply.clone();
        let mut woken = self.replies.watch(&reply);
        let message = json!(Message::Retry(retry)).to_string();
        match self.inbox.send(call, &message).await {
            Ok(()) => {}
            Err(SendError::Full { held }) => {
                return Err(ErrorData::internal_error(
                    format!("{held} retries wait for this call already; try again later"),
                    Some(json!({ "code": "overloaded" })),
                ));
            }
            Err(too_large @ SendError::TooLarge { .. }) => {
                return Err(ErrorData::invalid_params(too_large.to_string(), None));
            }
            Err(SendError::Store(reason)) => return Err(unreachable_store(&reason)),
        }
        loop {
            if let Some(relayed) = self.take_reply(&reply).await? {
                return Ok(relayed);
            }
            // Its server answers before it lets the call go.
            if !self.waits(call).await? {
                return self.take_reply(&reply).await?.ok_or_else(over);
            }
            tokio::select! {
                _ = woken.recv() => {}
                () = tokio::time::sleep(REREAD) => {}
                () = cancelled.cancelled() => {
                    let cancel = json!(Message::Cancel { reply }).to_string();
                    if let Err(e) = self.inbox.send(call, &cancel).await {
                        tracing::warn!(%call, "a cancelled MCP retry's call is not stopped: {e}");
                    }
                    return Err(ErrorData::internal_error("the call was cancelled", None));
                }
            }
        }
    }
}
