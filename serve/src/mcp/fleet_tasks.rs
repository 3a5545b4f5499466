//! MCP tasks a fleet shares (`[state] backend = "redis"`): a task runs on
//! the server that made it, and any server of the fleet answers
//! `tasks/get`, `tasks/update` and `tasks/cancel` for it.
//!
//! The keys, under the store's prefix:
//!
//! - `mcptask:<id>`: the task as `tasks/get` shows it and whose it is,
//!   sealed under the cluster key and kept its time to live; the running
//!   server writes it at each change, the first time before the call is
//!   answered with the task;
//! - `mcptaskowner:<id>`: a [`Lease`] the running server holds until the
//!   task ends; once it has expired with the task not ended, that server is
//!   gone and the task reads `failed` (`task_owner_gone`): its call is not
//!   run again anywhere;
//! - `mcptaskinbox:<id>`: what other servers received for the task
//!   (answers, a cancel), each sealed and bound to the task, published on
//!   `mcptaskinboxfeed` to wake the running server, which also reads it
//!   every second (pub/sub drops what is sent while it reconnects): a
//!   [`toolhost::redis_store::inbox::Inbox`].
//!
//! A writer of Redis without the cluster key can neither show a client a
//! task nor answer or cancel one: every record and message is sealed.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ErrorData, GetTaskResult, InputResponses};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use toolhost::redis_store::RedisStore;
use toolhost::redis_store::inbox::{Inbox, SendError};
use toolhost::redis_store::lease::{Lease, LeaseTerms};
use toolhost::redis_store::seal::Purpose;

/// The most messages an inbox holds; more are refused.
const INBOX_MAX: usize = 256;

/// The fleet's tasks in Redis.
pub struct FleetTasks {
    store: Arc<RedisStore>,
    inbox: Inbox,
    terms: LeaseTerms,
}

/// A task's record: whose it is, and what `tasks/get` shows.
#[derive(Serialize, Deserialize)]
struct Record {
    owner: String,
    task: Value,
}

/// What a server received for a task another runs.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Message {
    /// Answers to the questions it waits on.
    Update {
        /// Who sent them.
        owner: String,
        /// The answers.
        responses: InputResponses,
    },
    /// Stop it.
    Cancel {
        /// Who asked.
        owner: String,
    },
}

/// Redis could not be asked: the request fails, naming it.
fn unreachable_store(reason: String) -> ErrorData {
    ErrorData::internal_error(
        format!("the fleet's store did not answer: {reason}"),
        Some(json!({ "code": "state_unavailable" })),
    )
}

impl FleetTasks {
    /// Tasks in `store`, a running task's server holding it under `terms`.
    pub fn new(store: Arc<RedisStore>, terms: LeaseTerms) -> Arc<Self> {
        let inbox = Inbox::new(
            store.clone(),
            "mcptaskinbox",
            Purpose::McpTaskMessage,
            INBOX_MAX,
            terms.ttl * 10,
        );
        Arc::new(Self {
            store,
            inbox,
            terms,
        })
    }

    fn record_key(&self, id: &str) -> String {
        self.store.key("mcptask", &[id])
    }

    fn owner_key(&self, id: &str) -> String {
        self.store.key("mcptaskowner", &[id])
    }

    /// Hold task `id` as the server running it.
    pub async fn hold(&self, id: &str) -> Result<Option<Lease>, String> {
        Lease::acquire(&self.store, self.owner_key(id), self.terms).await
    }

    /// Write what `tasks/get` shows of task `id` of `owner`, kept `ttl`.
    pub async fn write(
        &self,
        id: &str,
        owner: &str,
        task: &GetTaskResult,
        ttl: Duration,
    ) -> Result<(), String> {
        let key = self.record_key(id);
        let record = Record {
            owner: owner.to_string(),
            task: json!(task),
        };
        let sealed = self
            .store
            .seal()
            .seal(Purpose::McpTask, &key, "", &json!(record).to_string());
        redis::cmd("SET")
            .arg(&key)
            .arg(sealed)
            .arg("PX")
            .arg(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1))
            .query_async::<()>(&mut self.store.connection())
            .await
            .map_err(|e| self.store.failure(&e))
    }

    /// Task `id` as `tasks/get` shows it to `owner`, if it is theirs and
    /// in the store; `failed` (`task_owner_gone`) when the server running
    /// it is gone before it ended.
    pub async fn read(&self, id: &str, owner: &str) -> Result<Option<GetTaskResult>, ErrorData> {
        let key = self.record_key(id);
        let mut connection = self.store.connection();
        let (sealed, running): (Option<String>, bool) = redis::pipe()
            .get(&key)
            .exists(self.owner_key(id))
            .query_async(&mut connection)
            .await
            .map_err(|e| unreachable_store(self.store.failure(&e)))?;
        let Some(sealed) = sealed else {
            return Ok(None);
        };
        let Ok(body) = self.store.seal().open(Purpose::McpTask, &key, "", &sealed) else {
            tracing::warn!(%key, "an MCP task's record in Redis is not sealed by the fleet");
            return Ok(None);
        };
        let Ok(record) = serde_json::from_str::<Record>(body) else {
            return Ok(None);
        };
        if record.owner != owner {
            return Ok(None);
        }
        let Ok(mut task) = serde_json::from_value::<GetTaskResult>(record.task) else {
            return Ok(None);
        };
        if !task.task.status().is_terminal() && !running {
            let mut shown = json!(task);
            shown["status"] = json!("failed");
            shown["error"] = json!(ErrorData::internal_error(
                "the server running the task stopped before it ended (its call is not run again)",
                Some(json!({ "code": "task_owner_gone" })),
            ));
            for gone in ["inputRequests", "result"] {
                if let Some(fields) = shown.as_object_mut() {
                    fields.remove(gone);
                }
            }
            task = serde_json::from_value(shown)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        }
        Ok(Some(task))
    }

    /// Send `message` to task `id` of `owner`, run by another server:
    /// whether the task is there to receive it (not ended, its server
    /// alive).
    pub async fn send(&self, id: &str, owner: &str, message: &Message) -> Result<bool, ErrorData> {
        let Some(task) = self.read(id, owner).await? else {
            return Ok(false);
        };
        if task.task.status().is_terminal() {
            return Ok(true);
        }
        match self.inbox.send(id, &json!(message).to_string()).await {
            Ok(()) => {}
            Err(SendError::Full { held }) => {
                return Err(ErrorData::internal_error(
                    format!("task {id} has {held} messages waiting already; try again later"),
                    Some(json!({ "code": "overloaded" })),
                ));
            }
            Err(too_large @ SendError::TooLarge { .. }) => {
                return Err(ErrorData::invalid_params(too_large.to_string(), None));
            }
            Err(SendError::Store(reason)) => return Err(unreachable_store(reason)),
        }
        Ok(true)
    }

    /// Woken when a message for task `id` may wait.
    pub fn watch(&self, id: &str) -> tokio::sync::broadcast::Receiver<()> {
        self.inbox.watch(id)
    }

    /// The messages waiting for task `id`, oldest first; ones not sealed
    /// by the fleet are dropped.
    pub async fn take(&self, id: &str) -> Vec<Message> {
        self.inbox.take(id).await
    }

    /// How often an inbox is read without a wake-up.
    pub fn reread(&self) -> Duration {
        self.inbox.reread()
    }
}
