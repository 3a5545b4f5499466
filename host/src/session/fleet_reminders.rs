//! Reminders a fleet shares, in Redis: any server fires a due reminder,
//! whichever server's tool set it, and exactly one server takes it.
//!
//! - `reminders`: a sorted set of every pending reminder's id, scored by
//!   when it is due (ms since the epoch);
//! - `reminder:<id>`: the reminder, as the JSON its file holds on one
//!   machine, sealed under the cluster key (`redis_store::seal`): one that
//!   does not verify at its key is dropped unfired, so no writer of Redis
//!   makes a server send a message or call a tool;
//! - `sesreminders:<session id>`: the ids pending in a session (its cap,
//!   its listing; they go with the session).
//!
//! Taking a due reminder removes it from the sorted set inside the script
//! that hands it out (`ZREM` answers 1 to one server only), so it fires at
//! most once across the fleet, as a file removed before firing does on one
//! machine; a server that dies between taking and firing loses it.

use std::sync::{Arc, LazyLock};

use chrono::{DateTime, Utc};
use redis::Script;

use super::reminder_store::ReminderStore;
use super::reminders::{MAX_PENDING, MAX_PENDING_PER_SESSION, Reminder, ReminderError};
use crate::redis_store::RedisStore;
use crate::redis_store::seal::Purpose;

/// Reminders one take hands out at most.
const TAKE_AT_ONCE: usize = 64;

/// `KEYS`: pending, the reminder, its session's set. `ARGV`: id, reminder,
/// due (ms), most pending, most per session.
static SCHEDULE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 'full' end
         if redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[5]) then return 'session_full' end
         redis.call('SET', KEYS[2], ARGV[2])
         redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
         redis.call('SADD', KEYS[3], ARGV[1])
         return 'ok'",
    )
});

/// `KEYS`: pending, the reminder, its session's set. `ARGV`: id. 1 if it
/// was pending in that session.
static CANCEL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('SREM', KEYS[3], ARGV[1]) == 0 then return 0 end
         redis.call('ZREM', KEYS[1], ARGV[1])
         redis.call('DEL', KEYS[2])
         return 1",
    )
});

/// `KEYS`: pending. `ARGV`: now (ms), most to take, reminder key prefix,
/// session set key prefix. The ids and reminders taken (by this call
/// only), in turn.
static TAKE_DUE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local taken = {}
         local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
         for _, id in ipairs(due) do
           if redis.call('ZREM', KEYS[1], id) == 1 then
             local reminder = redis.call('GET', ARGV[3] .. id)
             redis.call('DEL', ARGV[3] .. id)
             if reminder then
               local ok, r = pcall(cjson.decode, string.sub(reminder, 65))
               if ok and type(r) == 'table' and type(r.sessionId) == 'string' then
                 redis.call('SREM', ARGV[4] .. r.sessionId, id)
               end
               table.insert(taken, id)
               table.insert(taken, reminder)
             end
           end
         end
         return taken",
    )
});

/// `KEYS`: the session's set. `ARGV`: reminder key prefix. Its reminders.
static PENDING: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local out = {}
         for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
           local reminder = redis.call('GET', ARGV[1] .. id)
           if reminder then
             table.insert(out, id)
             table.insert(out, reminder)
           end
         end
         return out",
    )
});

/// How often a server looks for due reminders in Redis when none it knows
/// of is due sooner (another server may have set one).
const POLL: chrono::TimeDelta = chrono::TimeDelta::seconds(1);

/// A fleet's pending reminders, in Redis.
#[derive(Debug, Clone)]
pub(super) struct FleetReminders {
    store: Arc<RedisStore>,
}

impl FleetReminders {
    /// Reminders kept in `store`.
    pub(super) fn new(store: Arc<RedisStore>) -> Self {
        Self { store }
    }

    /// The key of the sorted set of pending reminders.
    pub(super) fn pending_key(&self) -> String {
        self.store.key("reminders", &[])
    }

    /// The key of reminder `id`.
    pub(super) fn reminder_key(&self, id: &str) -> String {
        self.store.key("reminder", &[id])
    }

    /// The key of the ids pending in session `id`.
    pub(super) fn session_key(&self, id: &str) -> String {
        self.store.key("sesreminders", &[id])
    }

    fn unavailable(&self, e: &redis::RedisError) -> ReminderError {
        ReminderError::Io(anyhow::anyhow!(self.store.failure(e)))
    }

    /// Keep `reminder`, within the bounds on pending reminders.
    pub(super) async fn schedule(&self, reminder: Reminder) -> Result<Reminder, ReminderError> {
        let json = serde_json::to_string(&reminder).map_err(anyhow::Error::from)?;
        let key = self.reminder_key(&reminder.id);
        let json = self.store.seal().seal(Purpose::Reminder, &key, "", &json);
        let answer: String = SCHEDULE
            .key(self.pending_key())
            .key(self.reminder_key(&reminder.id))
            .key(self.session_key(&reminder.session_id))
            .arg(&reminder.id)
            .arg(json)
            .arg(reminder.fire_at.timestamp_millis())
            .arg(MAX_PENDING)
            .arg(MAX_PENDING_PER_SESSION)
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.unavailable(&e))?;
        match answer.as_str() {
            "ok" => Ok(reminder),
            "full" => Err(ReminderError::Full(format!(
                "the fleet has {MAX_PENDING} reminders pending already, the most it keeps"
            ))),
            _ => Err(ReminderError::Full(format!(
                "session `{}` has {MAX_PENDING_PER_SESSION} reminders pending already, \
                 the most a session may; cancel one first",
                reminder.session_id
            ))),
        }
    }

    /// The session's pending reminders, soonest first.
    pub(super) async fn pending(&self, session: &str) -> Result<Vec<Reminder>, ReminderError> {
        let found: Vec<String> = PENDING
            .key(self.session_key(session))
            .arg(self.reminder_key(""))
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.unavailable(&e))?;
        let mut pending = self.opened(&found);
        pending.retain(|r| r.session_id == session);
        pending.sort_by(|a, b| (a.fire_at, &a.id).cmp(&(b.fire_at, &b.id)));
        Ok(pending)
    }

    /// Cancel the session's pending reminder `id`: `false` when it has none
    /// by that id.
    pub(super) async fn cancel(&self, session: &str, id: &str) -> Result<bool, ReminderError> {
        CANCEL
            .key(self.pending_key())
            .key(self.reminder_key(id))
            .key(self.session_key(session))
            .arg(id)
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.unavailable(&e))
    }

    /// The reminders due at `now` that this server takes (no other server
    /// gets them), soonest first.
    pub(super) async fn take_due(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Vec<Reminder>, ReminderError> {
        let taken: Vec<String> = TAKE_DUE
            .key(self.pending_key())
            .arg(now.timestamp_millis())
            .arg(TAKE_AT_ONCE)
            .arg(self.reminder_key(""))
            .arg(self.session_key(""))
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.unavailable(&e))?;
        let mut due = self.opened(&taken);
        due.sort_by_key(|r| r.fire_at);
        Ok(due)
    }

    /// When the soonest pending reminder of the fleet is due.
    pub(super) async fn next_due(&self) -> Result<Option<DateTime<Utc>>, ReminderError> {
        let first: Vec<(String, f64)> = redis::cmd("ZRANGE")
            .arg(self.pending_key())
            .arg(0)
            .arg(0)
            .arg("WITHSCORES")
            .query_async(&mut self.store.connection())
            .await
            .map_err(|e| self.unavailable(&e))?;
        Ok(first
            .first()
            .and_then(|(_, ms)| DateTime::from_timestamp_millis(*ms as i64)))
    }
}

impl FleetReminders {
    /// The reminders in `pairs` (each id, then its sealed reminder): one
    /// that no server of the fleet sealed at its key, or that names another
    /// id, is logged and left out.
    fn opened(&self, pairs: &[String]) -> Vec<Reminder> {
        let (pairs, _) = pairs.as_chunks::<2>();
        pairs
            .iter()
            .filter_map(|[id, sealed]| {
                let key = self.reminder_key(id);
                let read = self
                    .store
                    .seal()
                    .open(Purpose::Reminder, &key, "", sealed)
                    .map_err(|e| e.to_string())
                    .and_then(|json| {
                        serde_json::from_str::<Reminder>(json)
                            .map_err(|e| format!("the reminder at `{key}` is not valid: {e}"))
                    })
                    .and_then(|reminder| {
                        if &reminder.id == id {
                            Ok(reminder)
                        } else {
                            Err(format!("the reminder at `{key}` names another id"))
                        }
                    });
                read.inspect_err(|why| tracing::warn!("ignoring a reminder in Redis: {why}"))
                    .ok()
            })
            .collect()
    }
}

#[async_trait::async_trait]
impl ReminderStore for FleetReminders {
    async fn schedule(&self, reminder: Reminder) -> Result<Reminder, ReminderError> {
        FleetReminders::schedule(self, reminder).await
    }

    async fn pending(&self, session: &str) -> Result<Vec<Reminder>, ReminderError> {
        FleetReminders::pending(self, session).await
    }

    async fn cancel(&self, session: &str, id: &str) -> Result<bool, ReminderError> {
        FleetReminders::cancel(self, session, id).await
    }

    async fn take_due(&self, now: DateTime<Utc>) -> Result<Vec<Reminder>, ReminderError> {
        FleetReminders::take_due(self, now).await
    }

    async fn next_due(&self) -> Result<Option<DateTime<Utc>>, ReminderError> {
        FleetReminders::next_due(self).await
    }

    fn poll(&self) -> Option<chrono::TimeDelta> {
        Some(POLL)
    }
}
