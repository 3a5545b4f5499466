//! Parked calls a fleet shares (`[state] backend = "redis"`): a call waits
//! on the server that runs it, and an approval, a custom tool's result or
//! an answer to its question may arrive on any server.
//!
//! The keys, under the store's prefix:
//!
//! - `call:<id>`: a hash of the call's session, tool, status and how many
//!   times it has started waiting, and once it is done its answer (HTTP
//!   status and body), kept for the session retention;
//! - `callowner:<id>`: a [`Lease`] the parking server holds while the call
//!   is not done; once it has expired the server is gone, and the call is
//!   answered `409 call_owner_gone`;
//! - `callanswer:<id>`: what another server received for the call, set
//!   once (`SET NX`) by a script that checks, in the same step, that the
//!   call waits for that kind of answer and that its owner lives, and
//!   tagged with the wait it answers; a new wait drops an answer left from
//!   the one before.
//!
//! A call's outcome and every answer are sealed under the cluster key
//! (`toolhost::redis_store::seal`), an answer bound to the call and the
//! wait it answers: no writer of Redis answers a call (approves it, or
//! gives a custom tool's result) or forges what a poll of it returns.
//!
//! Each answer is published on `callfeed` to wake the parking server up;
//! it also reads its calls' answers again every second, since pub/sub
//! drops what is sent while it reconnects.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use redis::Script;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::broadcast;

use axum::http::StatusCode;
use toolhost::redis_store::RedisStore;
use toolhost::redis_store::feed::Wakeups;
use toolhost::redis_store::lease::{Lease, LeaseTerms};
use toolhost::redis_store::seal::Purpose;

use super::error::ApiError;
use super::fleet_approvals::FleetApprovals;

/// The JSON name of a finished call's status.
const DONE: &str = "done";

/// How often a parked call's answer is read again without a wake-up, and
/// how often a remote poll reads the call again.
const REREAD: Duration = Duration::from_secs(1);

/// `KEYS`: call, owner, answer. `ARGV`: the status waited for, the
/// session the answer must come from (or `''`), the answer (sealed for the
/// wait), how long to keep it (ms), the channel, the call id, the wait it
/// answers. The answer is stored as the wait's number, a space, and the
/// answer.
static ANSWER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local call = redis.call('HMGET', KEYS[1], 'session', 'status', 'wait')
         if not call[1] then return {'not_found'} end
         if ARGV[2] ~= '' and call[1] ~= ARGV[2] then return {'not_found'} end
         if call[2] ~= ARGV[1] then return {'not_waiting', call[2]} end
         if (call[3] or '0') ~= ARGV[7] then return {'not_waiting', 'waiting again since'} end
         if redis.call('EXISTS', KEYS[2]) == 0 then return {'owner_gone'} end
         local tagged = (call[3] or '0') .. ' ' .. ARGV[3]
         if not redis.call('SET', KEYS[3], tagged, 'NX', 'PX', ARGV[4]) then
           return {'not_waiting', 'answered already, the answer not yet taken by the server running it'}
         end
         redis.call('PUBLISH', ARGV[5], ARGV[6])
         return {'ok'}",
    )
});

/// `KEYS`: call, answer. `ARGV`: status, and the number of the wait it
/// starts (or `''`). Nothing is written once the call's record has expired.
static SET_STATUS: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
         redis.call('HSET', KEYS[1], 'status', ARGV[1])
         if ARGV[2] ~= '' then
           redis.call('HSET', KEYS[1], 'wait', ARGV[2])
           redis.call('DEL', KEYS[2])
         end
         return 1",
    )
});

/// What another server received for a parked call, for its owner to apply
/// as if it had been posted there.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Forwarded {
    /// The body of `POST …/approvals/<callId>`.
    Approval {
        /// As posted.
        body: Value,
    },
    /// One event of `POST …/sessions/<id>/events` (a custom tool's result,
    /// an elicitation's or a sampling's).
    Event {
        /// The session it was posted to.
        session: String,
        /// As posted.
        event: Value,
    },
}

/// Why an answer could not be forwarded.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    /// No server parked this call.
    #[error("no call `{0}` is known (it never waited, or its record expired)")]
    NotFound(String),
    /// The call does not wait for this kind of answer (or has one already).
    #[error("call `{call}` is not waiting for {what} (it is {status})")]
    NotWaiting {
        /// The call id.
        call: String,
        /// What was offered.
        what: &'static str,
        /// Where it stands.
        status: String,
    },
    /// The server that parked it is gone (its lease expired).
    #[error(
        "call `{0}` waited on a server that is gone (it stopped renewing the call's lease); \
         the call did not finish: make it again"
    )]
    OwnerGone(String),
    /// Redis did not answer.
    #[error("the parked calls are kept in {0}")]
    Unavailable(String),
}

impl From<ForwardError> for ApiError {
    fn from(error: ForwardError) -> Self {
        let (status, code) = match &error {
            ForwardError::NotFound(_) => (StatusCode::NOT_FOUND, "call_not_found"),
            ForwardError::NotWaiting { .. } => (StatusCode::CONFLICT, "call_not_waiting"),
            ForwardError::OwnerGone(_) => (StatusCode::CONFLICT, "call_owner_gone"),
            ForwardError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "state_unavailable"),
        };
        Self::new(status, code, error.to_string())
    }
}

/// A call parked on some server, as Redis holds it.
#[derive(Debug, Clone)]
pub struct RemoteCall {
    /// The tool.
    pub tool_name: String,
    /// The session.
    pub session_id: String,
    /// Where it stands (`Status` as its JSON name).
    pub status: String,
    /// Once done: the HTTP status and body it answered with.
    pub outcome: Option<(u16, Value)>,
    /// Whether the server running it still holds its lease.
    pub owner_alive: bool,
}

/// The parked calls of a fleet, in Redis, and this server's wake-ups for
/// the ones parked on it.
pub struct FleetCalls {
    store: Arc<RedisStore>,
    /// The owner lease's terms (`[state] session_lease_ms`).
    terms: LeaseTerms,
    /// How long a finished call's answer is kept.
    retention: Duration,
    /// Woken by `callfeed` when an answer for a call parked here arrives.
    wakeups: Arc<Wakeups>,
    /// The approvals the fleet's calls wait for.
    approvals: FleetApprovals,
}

impl FleetCalls {
    /// Parked calls kept in `store`, owned on `terms`, finished ones kept
    /// for `retention`.
    pub fn new(store: Arc<RedisStore>, terms: LeaseTerms, retention: Duration) -> Arc<Self> {
        Arc::new(Self {
            wakeups: Wakeups::new(store.clone(), store.key("callfeed", &[]), REREAD),
            approvals: FleetApprovals::new(store.clone()),
            terms,
            store,
            retention,
        })
    }

    /// The approvals the fleet's calls wait for.
    pub fn approvals(&self) -> &FleetApprovals {
        &self.approvals
    }

    fn call_key(&self, id: &str) -> String {
        self.store.key("call", &[id])
    }

    fn owner_key(&self, id: &str) -> String {
        self.store.key("callowner", &[id])
    }

    fn answer_key(&self, id: &str) -> String {
        self.store.key("callanswer", &[id])
    }

    fn error(&self, e: &redis::RedisError) -> String {
        self.store.failure(e)
    }

    /// Record that call `id` (of `tool` in `session`) parks here in
    /// `status`, starting its wait number `wait`: its record, and the lease
    /// saying this server runs it (held until the returned lease is
    /// dropped).
    pub async fn park(
        &self,
        (id, tool, session): (&str, &str, &str),
        status: &str,
        wait: u64,
    ) -> Result<Lease, String> {
        let lease = Lease::acquire(&self.store, self.owner_key(id), self.terms)
            .await?
            .ok_or_else(|| format!("call `{id}` is parked on another server already"))?;
        let wait = wait.to_string();
        redis::pipe()
            .atomic()
            .hset_multiple(
                self.call_key(id),
                &[
                    ("session", session),
                    ("tool", tool),
                    ("status", status),
                    ("wait", &wait),
                ],
            )
            .ignore()
            .pexpire(self.call_key(id), millis(self.retention + self.terms.ttl))
            .ignore()
            .query_async::<()>(&mut self.store.connection())
            .await
            .map_err(|e| self.error(&e))?;
        Ok(lease)
    }

    /// Record where call `id` stands now (its status's JSON name).
    pub async fn set_status(&self, id: &str, status: &str) -> Result<(), String> {
        self.write_status(id, status, None).await
    }

    /// Record that call `id` waits again, in `status`, its wait number
    /// `wait`: an answer left from its previous wait is dropped.
    pub async fn wait_again(&self, id: &str, status: &str, wait: u64) -> Result<(), String> {
        self.write_status(id, status, Some(wait)).await
    }

    async fn write_status(&self, id: &str, status: &str, wait: Option<u64>) -> Result<(), String> {
        let wait = wait.map(|n| n.to_string()).unwrap_or_default();
        let written: i64 = SET_STATUS
            .key(self.call_key(id))
            .key(self.answer_key(id))
            .arg(status)
            .arg(wait)
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(&e))?;
        if written == 0 {
            return Err(format!("call `{id}`'s record in Redis has expired"));
        }
        Ok(())
    }

    /// Record what call `id` answered with once done, kept for the
    /// retention period.
    pub async fn finish(&self, id: &str, status: u16, body: &Value) -> Result<(), String> {
        let outcome = serde_json::json!({ "status": status, "body": body }).to_string();
        let outcome = self.store.seal().seal(
            Purpose::CallOutcome,
            &self.call_key(id),
            "outcome",
            &outcome,
        );
        redis::pipe()
            .atomic()
            .hset_multiple(
                self.call_key(id),
                &[("status", DONE), ("outcome", outcome.as_str())],
            )
            .ignore()
            .pexpire(self.call_key(id), millis(self.retention))
            .ignore()
            .del(self.answer_key(id))
            .ignore()
            .query_async::<()>(&mut self.store.connection())
            .await
            .map_err(|e| self.error(&e))
    }

    /// Hand `answer` to the server running call `id`, if the call waits
    /// there in the status named `waited` (and, given `session`, belongs
    /// to it).
    pub async fn forward(
        &self,
        id: &str,
        waited: &str,
        session: Option<&str>,
        answer: &Forwarded,
        what: &'static str,
    ) -> Result<(), ForwardError> {
        let body =
            serde_json::to_string(answer).map_err(|e| ForwardError::Unavailable(e.to_string()))?;
        // Sealed for the wait it answers: read first, and checked again by
        // the script, so an answer never lands in a later wait.
        let wait: Option<String> = redis::cmd("HGET")
            .arg(self.call_key(id))
            .arg("wait")
            .query_async(&mut self.store.connection())
            .await
            .map_err(|e| ForwardError::Unavailable(self.error(&e)))?;
        let wait = wait.unwrap_or_else(|| "0".to_string());
        let body = self
            .store
            .seal()
            .seal(Purpose::CallAnswer, &self.answer_key(id), &wait, &body);
        let reply: Vec<String> = ANSWER
            .key(self.call_key(id))
            .key(self.owner_key(id))
            .key(self.answer_key(id))
            .arg(waited)
            .arg(session.unwrap_or_default())
            .arg(body)
            .arg(millis(self.retention))
            .arg(self.wakeups.channel())
            .arg(id)
            .arg(&wait)
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| ForwardError::Unavailable(self.error(&e)))?;
        match reply.first().map(String::as_str) {
            Some("ok") => Ok(()),
            Some("owner_gone") => Err(ForwardError::OwnerGone(id.to_string())),
            Some("not_waiting") => Err(ForwardError::NotWaiting {
                call: id.to_string(),
                what,
                status: reply.get(1).cloned().unwrap_or_default(),
            }),
            _ => Err(ForwardError::NotFound(id.to_string())),
        }
    }

    /// Call `id` as Redis holds it.
    pub async fn view(&self, id: &str) -> Result<Option<RemoteCall>, String> {
        let (fields, owner): (HashMap<String, String>, bool) = redis::pipe()
            .hgetall(self.call_key(id))
            .exists(self.owner_key(id))
            .query_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(&e))?;
        let (Some(session_id), Some(tool_name), Some(status)) = (
            fields.get("session"),
            fields.get("tool"),
            fields.get("status"),
        ) else {
            return Ok(None);
        };
        let key = self.call_key(id);
        let outcome = fields
            .get("outcome")
            .and_then(|sealed| {
                self.store
                    .seal()
                    .open(Purpose::CallOutcome, &key, "outcome", sealed)
                    .inspect_err(|e| tracing::warn!(call = id, "ignoring an outcome: {e}"))
                    .ok()
            })
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .and_then(|o| {
                let status = u16::try_from(o["status"].as_u64()?).ok()?;
                Some((status, o["body"].clone()))
            });
        Ok(Some(RemoteCall {
            tool_name: tool_name.clone(),
            session_id: session_id.clone(),
            status: status.clone(),
            outcome,
            owner_alive: owner,
        }))
    }

    /// Wait for what another server received for call `id` (parked here),
    /// and take it with the number of the wait it was given in: read after
    /// each wake-up and every [`REREAD`], until one is there.
    pub async fn answer(&self, id: &str) -> (u64, Forwarded) {
        let mut woken = self.wakeups.watch(id);
        loop {
            // Taken, so the call's next wait (a question after its
            // approval) can be answered again.
            let read = redis::cmd("GETDEL")
                .arg(self.answer_key(id))
                .query_async::<Option<String>>(&mut self.store.connection())
                .await;
            match read {
                Ok(Some(text)) => match self.parse_tagged(id, &text) {
                    Ok(taken) => return taken,
                    Err(e) => tracing::warn!(call = id, "an answer in Redis is not valid: {e}"),
                },
                Ok(None) => {}
                Err(e) => tracing::debug!(call = id, "{}", self.error(&e)),
            }
            tokio::select! {
                wake = woken.recv() => {
                    if matches!(wake, Err(broadcast::error::RecvError::Closed)) {
                        woken = self.wakeups.watch(id);
                    }
                }
                () = tokio::time::sleep(REREAD) => {}
            }
        }
    }
}

impl FleetCalls {
    /// An answer to call `id` as [`ANSWER`] stores it: its wait's number
    /// and the answer, if a server of the fleet sealed it for that wait.
    fn parse_tagged(&self, id: &str, text: &str) -> Result<(u64, Forwarded), String> {
        let (wait, sealed) = text.split_once(' ').ok_or("it has no wait number")?;
        let answer = self
            .store
            .seal()
            .open(Purpose::CallAnswer, &self.answer_key(id), wait, sealed)
            .map_err(|e| e.to_string())?;
        let wait = wait
            .parse()
            .map_err(|_| format!("its wait number is {wait:?}"))?;
        let answer = serde_json::from_str(answer).map_err(|e| e.to_string())?;
        Ok((wait, answer))
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis())
        .unwrap_or(i64::MAX)
        .max(1)
}
