//! Sessions several servers share, kept in Redis (`[state] backend =
//! "redis"`): each session's record, its continuation token, when it was
//! last active, and its write slot.
//!
//! The keys, under the store's prefix:
//!
//! - `session:<id>`: the record, as the JSON `session.json` holds on one
//!   machine, sealed under the cluster key (`redis_store::seal`): a record
//!   that does not verify, or names another session than its key, is not
//!   there;
//! - `sestoken:<channel>:<key>`: the id of the session holding the token;
//! - `sessions`: a sorted set of every id, scored by when the session was
//!   last active or, if later, when a reminder in it is due (ms since the
//!   epoch), which the fleet's sweeps walk;
//! - `sesactive`: a hash of each id's last activity, as clients see it;
//! - `slot:<id>`: the write slot, a [`Lease`] its holder renews.
//!
//! Creating, removing and sweeping a session change these in one Lua
//! script each, so no server ever sees a token without its record. The
//! scripts build record, slot and token keys from ids inside Redis: the
//! store needs one Redis server (or a primary with replicas), not Redis
//! Cluster.

use std::sync::{Arc, LazyLock};

use redis::Script;

use super::fleet_events::{EventFeed, StreamLimits, event_feed, session_events, streams_key};
use super::fleet_reminders::FleetReminders;
use super::record::Record;
use super::{HistoryBudget, Session};
use crate::redis_store::RedisStore;
use crate::redis_store::lease::{Lease, LeaseTerms, Refused};
use crate::redis_store::seal::Purpose;

/// Lua: drop the session `id` (record, token if it still names it, index
/// entry, event stream and its counts, pending reminders) unless its
/// write slot is held. `ARGV` of the caller: ..., the record, slot, token,
/// events, event sequence, event bytes, session reminders and reminder
/// key prefixes from `p` on.
const DROP_SESSION: &str = "
local function drop_session(index, all_bytes, reminders, streams, active, id, p)
  if redis.call('EXISTS', ARGV[p + 1] .. id) == 1 then return 'busy' end
  for _, reminder in ipairs(redis.call('SMEMBERS', ARGV[p + 6] .. id)) do
    redis.call('ZREM', reminders, reminder)
    redis.call('DEL', ARGV[p + 7] .. reminder)
  end
  redis.call('DEL', ARGV[p + 6] .. id)
  local held = tonumber(redis.call('GET', ARGV[p + 5] .. id) or '0')
  if held > 0 then redis.call('DECRBY', all_bytes, held) end
  redis.call('DEL', ARGV[p + 3] .. id, ARGV[p + 4] .. id, ARGV[p + 5] .. id)
  redis.call('ZREM', streams, id)
  local record = redis.call('GET', ARGV[p] .. id)
  if record then
    local ok, r = pcall(cjson.decode, string.sub(record, 65))
    if ok and type(r) == 'table' and type(r.channel) == 'string' and type(r.key) == 'string' then
      local token = ARGV[p + 2] .. r.channel .. ':' .. r.key
      if redis.call('GET', token) == id then redis.call('DEL', token) end
    end
    redis.call('DEL', ARGV[p] .. id)
  end
  redis.call('ZREM', index, id)
  redis.call('HDEL', active, id)
  if record then return 'removed' end
  return 'missing'
end
";

/// `KEYS`: record, index, last activities, then the token's key if it has
/// one. `ARGV`: id, record, now (ms), the most sessions kept.
static CREATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return {'full'} end
         if KEYS[4] then
           local holder = redis.call('GET', KEYS[4])
           if holder then return {'taken', holder} end
           redis.call('SET', KEYS[4], ARGV[1])
         end
         redis.call('SET', KEYS[1], ARGV[2])
         redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
         redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
         return {'ok'}",
    )
});

/// `KEYS`: the token's key (or the record's, see `ARGV[3]`), index, last
/// activities. `ARGV`: record key prefix, now (ms) or `''` to leave it
/// idle, `id` when `KEYS[1]` is the record's key (else `''`). The record,
/// its last activity and its id, or nil.
static LOAD: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local id = ARGV[3]
         if id == '' then
           id = redis.call('GET', KEYS[1])
           if not id then return nil end
         end
         local record = redis.call('GET', ARGV[1] .. id)
         if not record then return nil end
         local active = tonumber(redis.call('HGET', KEYS[3], id) or redis.call('ZSCORE', KEYS[2], id) or '0')
         if ARGV[2] ~= '' then
           redis.call('ZADD', KEYS[2], 'GT', ARGV[2], id)
           if tonumber(ARGV[2]) > active then
             active = tonumber(ARGV[2])
             redis.call('HSET', KEYS[3], id, ARGV[2])
           end
         end
         return {record, tostring(active), id}",
    )
});

/// `KEYS`: index, all events' bytes, pending reminders, streams holding
/// events, last activities. `ARGV`: id, then
/// the key prefixes of
/// [`DROP_SESSION`].
static REMOVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{DROP_SESSION}
         return drop_session(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], 2)"
    ))
});

/// `KEYS`: index, all events' bytes, pending reminders, streams holding
/// events, last activities. `ARGV`: cutoff
/// (ms), most to look at, then the key
/// prefixes of [`DROP_SESSION`]. The ids removed, and how many were looked at.
static SWEEP: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{DROP_SESSION}
         local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
         local removed = {{}}
         for _, id in ipairs(ids) do
           if drop_session(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], id, 3) ~= 'busy' then table.insert(removed, id) end
         end
         return {{#ids, removed}}"
    ))
});

/// `KEYS`: index, last activities. `ARGV`: record and slot key prefixes, `ZSCAN` cursor,
/// how many to look at. The next cursor, then each id, its record, its
/// last activity and whether its slot is held (`1`/`0`), in turn. A full scan
/// returns every session there throughout it (some twice), however their
/// scores move meanwhile.
static LIST: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local page = redis.call('ZSCAN', KEYS[1], ARGV[3], 'COUNT', ARGV[4])
         local out = {page[1]}
         local all = page[2]
         for i = 1, #all, 2 do
           local record = redis.call('GET', ARGV[1] .. all[i])
           if record then
             table.insert(out, all[i])
             table.insert(out, record)
             table.insert(out, redis.call('HGET', KEYS[2], all[i]) or all[i + 1])
             table.insert(out, tostring(redis.call('EXISTS', ARGV[2] .. all[i])))
           end
         end
         return out",
    )
});

/// A record read from Redis, and when its session was last active.
pub(super) struct Stored {
    /// The record.
    pub record: Record,
    /// Last activity, in ms since the epoch.
    pub last_active_ms: i64,
}

/// A record listed from Redis, and whether a write call holds its slot.
pub(super) struct ListedRecord {
    /// The record and its last activity.
    pub stored: Stored,
    /// Whether a write call (on any server) holds its slot.
    pub busy: bool,
}

/// What creating a session in Redis did.
pub(super) enum Created {
    /// It is stored.
    Stored,
    /// Another session holds the token: its id.
    TokenTaken(String),
    /// The fleet keeps as many sessions as it may.
    Full,
}

/// What removing a session from Redis did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Removal {
    /// It is gone.
    Done,
    /// A write call holds its slot.
    Busy,
    /// No session had the id.
    Missing,
}

/// The sessions of a fleet, in Redis.
pub(super) struct FleetSessions {
    store: Arc<RedisStore>,
    /// The write slot's lease terms.
    terms: LeaseTerms,
    /// What the event streams may hold.
    limits: StreamLimits,
    /// This server's wake-ups for the streams followed on it.
    feed: Arc<EventFeed>,
    /// The fleet's pending reminders.
    reminders: FleetReminders,
}

impl std::fmt::Debug for FleetSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetSessions")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl FleetSessions {
    /// Sessions kept in `store`, their write slots leased on `terms`, their
    /// event streams held to `history`.
    pub(super) fn new(store: Arc<RedisStore>, terms: LeaseTerms, history: &HistoryBudget) -> Self {
        Self {
            feed: event_feed(&store),
            reminders: FleetReminders::new(store.clone()),
            limits: StreamLimits {
                session_bytes: history.session_bytes(),
                every_bytes: history.every_bytes(),
            },
            store,
            terms,
        }
    }

    /// The fleet's pending reminders.
    pub(super) fn reminders(&self) -> &FleetReminders {
        &self.reminders
    }

    /// `session` as the fleet shares it: its write slot and its events in
    /// Redis.
    pub(super) fn share(&self, session: Session) -> Session {
        let id = session.id().to_string();
        let record = self.record_key(&id);
        let events = session_events(&self.store, &self.feed, (&id, record), self.limits);
        session.shared(self.slot(&id), events)
    }

    /// A connection to Redis (tests write records by hand with it).
    #[cfg(test)]
    pub(super) fn connection(&self) -> redis::aio::ConnectionManager {
        self.store.connection()
    }

    /// The key of the fleet's set of sessions (tests plant members in it).
    #[cfg(test)]
    pub(super) fn sessions_key(&self) -> String {
        self.index_key()
    }

    pub(super) fn record_key(&self, id: &str) -> String {
        self.store.key("session", &[id])
    }

    fn index_key(&self) -> String {
        self.store.key("sessions", &[])
    }

    fn active_key(&self) -> String {
        self.store.key("sesactive", &[])
    }

    pub(super) fn token_key(&self, token: &str) -> String {
        self.store.key("sestoken", &[token])
    }

    fn slot_key(&self, id: &str) -> String {
        self.store.key("slot", &[id])
    }

    /// The prefixes [`DROP_SESSION`] builds keys from.
    fn drop_prefixes(&self) -> [String; 8] {
        [
            self.record_key(""),
            self.slot_key(""),
            self.token_key(""),
            self.store.key("events", &[""]),
            self.store.key("events-seq", &[""]),
            self.store.key("evbytes", &[""]),
            self.reminders.session_key(""),
            self.reminders.reminder_key(""),
        ]
    }

    fn all_event_bytes_key(&self) -> String {
        self.store.key("evbytes", &[])
    }

    fn error(&self, e: &redis::RedisError) -> String {
        self.store.failure(e)
    }

    /// The write slot of the session `id`, for [`super::Session`] to lease.
    fn slot(&self, id: &str) -> FleetSlot {
        FleetSlot {
            store: self.store.clone(),
            key: self.slot_key(id),
            record: self.record_key(id),
            terms: self.terms,
        }
    }

    /// Store a new session's record (and its token), within `max` sessions.
    pub(super) async fn create(
        &self,
        record: &Record,
        token: Option<&str>,
        now_ms: i64,
        max: usize,
    ) -> Result<Created, String> {
        let json = self.sealed(record)?;
        let mut invocation = CREATE.key(self.record_key(&record.id));
        invocation.key(self.index_key()).key(self.active_key());
        if let Some(token) = token {
            invocation.key(self.token_key(token));
        }
        invocation.arg(&record.id).arg(json).arg(now_ms).arg(max);
        let answer: Vec<String> = invocation
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(&e))?;
        Ok(match answer.as_slice() {
            [ok] if ok == "ok" => Created::Stored,
            [full] if full == "full" => Created::Full,
            [taken, holder] if taken == "taken" => Created::TokenTaken(holder.clone()),
            other => return Err(format!("Redis answered {other:?} to a session's creation")),
        })
    }

    /// The record of session `id`; `touch_ms` marks it active then.
    pub(super) async fn load(
        &self,
        id: &str,
        touch_ms: Option<i64>,
    ) -> Result<Option<Stored>, String> {
        self.load_from(self.record_key(id), id, touch_ms).await
    }

    /// The record of the session holding `token`; `touch_ms` marks it
    /// active then.
    pub(super) async fn load_by_token(
        &self,
        token: &str,
        touch_ms: Option<i64>,
    ) -> Result<Option<Stored>, String> {
        let stored = self.load_from(self.token_key(token), "", touch_ms).await?;
        // The token's key is not sealed: the (sealed) record it leads to
        // must hold that token.
        Ok(stored.filter(|stored| {
            let holds = match (&stored.record.channel, &stored.record.key) {
                (Some(channel), Some(key)) => token.split_once(':') == Some((channel, key)),
                _ => false,
            };
            if !holds {
                tracing::warn!(
                    "ignoring the session the token {} leads to in Redis: its record holds \
                     another token",
                    crate::shown::quoted(token)
                );
            }
            holds
        }))
    }

    async fn load_from(
        &self,
        key: String,
        id: &str,
        touch_ms: Option<i64>,
    ) -> Result<Option<Stored>, String> {
        let touch = touch_ms.map(|ms| ms.to_string()).unwrap_or_default();
        let answer: Option<(String, String, String)> = LOAD
            .key(key)
            .key(self.index_key())
            .key(self.active_key())
            .arg(self.record_key(""))
            .arg(touch)
            .arg(id)
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(&e))?;
        Ok(answer.and_then(|(sealed, score, id)| self.stored(&id, &sealed, &score)))
    }

    /// Write the record of a session that exists (an upgrade moved its
    /// version): false if it is gone.
    pub(super) async fn save(&self, record: &Record) -> Result<bool, String> {
        let json = self.sealed(record)?;
        let written: Option<String> = redis::cmd("SET")
            .arg(self.record_key(&record.id))
            .arg(json)
            .arg("XX")
            .query_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(&e))?;
        Ok(written.is_some())
    }

    /// Keep the session `id` at least until `until_ms` plus the retention
    /// (a reminder is due then).
    pub(super) async fn keep_until(&self, id: &str, until_ms: i64) -> Result<(), String> {
        redis::cmd("ZADD")
            .arg(self.index_key())
            .arg("XX")
            .arg("GT")
            .arg(until_ms)
            .arg(id)
            .query_async::<i64>(&mut self.store.connection())
            .await
            .map_err(|e| self.error(&e))?;
        Ok(())
    }

    /// Remove the session `id`, unless a write call holds its slot.
    pub(super) async fn remove(&self, id: &str) -> Result<Removal, String> {
        let answer: String = REMOVE
            .key(self.index_key())
            .key(self.all_event_bytes_key())
            .key(self.reminders.pending_key())
            .key(streams_key(&self.store))
            .key(self.active_key())
            .arg(id)
            .arg(&self.drop_prefixes()[..])
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(&e))?;
        Ok(match answer.as_str() {
            "removed" => Removal::Done,
            "busy" => Removal::Busy,
            _ => Removal::Missing,
        })
    }

    /// Remove the sessions idle since before `cutoff_ms` whose slot is
    /// free, a batch at a time: the ids this server removed (another
    /// server sweeping at once removes the others).
    pub(super) async fn sweep(&self, cutoff_ms: i64) -> Result<Vec<String>, String> {
        const BATCH: usize = 256;
        let mut removed = Vec::new();
        loop {
            let (looked_at, batch): (usize, Vec<String>) = SWEEP
                .key(self.index_key())
                .key(self.all_event_bytes_key())
                .key(self.reminders.pending_key())
                .key(streams_key(&self.store))
                .key(self.active_key())
                .arg(cutoff_ms)
                .arg(BATCH)
                .arg(&self.drop_prefixes()[..])
                .invoke_async(&mut self.store.connection())
                .await
                .map_err(|e| self.error(&e))?;
            let busy_only = batch.is_empty();
            removed.extend(batch);
            // A full batch of busy sessions would be looked at again and
            // again: they wait for the next sweep.
            if looked_at < BATCH || busy_only {
                return Ok(removed);
            }
        }
    }

    /// Every session's record, last activity and whether it is busy, read
    /// a page at a time (no script holds Redis up for long).
    pub(super) async fn list(&self) -> Result<Vec<ListedRecord>, String> {
        const PAGE: usize = 256;
        let mut listed = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut cursor = "0".to_string();
        loop {
            let mut page: Vec<String> = LIST
                .key(self.index_key())
                .key(self.active_key())
                .arg(self.record_key(""))
                .arg(self.slot_key(""))
                .arg(&cursor)
                .arg(PAGE)
                .invoke_async(&mut self.store.connection())
                .await
                .map_err(|e| self.error(&e))?;
            if page.is_empty() {
                return Err("Redis answered a session listing with nothing".to_string());
            }
            let rest = page.split_off(1);
            cursor = page.swap_remove(0);
            let (fours, _) = rest.as_chunks::<4>();
            for [id, record, score, busy] in fours {
                let Some(stored) = self.stored(id, record, score) else {
                    continue;
                };
                if seen.insert(stored.record.id.clone()) {
                    listed.push(ListedRecord {
                        stored,
                        busy: busy == "1",
                    });
                }
            }
            if cursor == "0" {
                return Ok(listed);
            }
        }
    }

    /// Whether a write call (on any server) holds the slot of session `id`.
    pub(super) async fn busy(&self, id: &str) -> Result<bool, String> {
        self.slot(id).held().await
    }
}

impl FleetSessions {
    /// `record` sealed for its key.
    fn sealed(&self, record: &Record) -> Result<String, String> {
        let json = serde_json::to_string(record).map_err(|e| e.to_string())?;
        let key = self.record_key(&record.id);
        Ok(self.store.seal().seal(Purpose::Session, &key, "", &json))
    }

    /// The record of session `id` read from Redis: `None` (and a warning)
    /// unless a server of the fleet sealed it for that session.
    fn stored(&self, id: &str, sealed: &str, score: &str) -> Option<Stored> {
        let key = self.record_key(id);
        let read = self
            .store
            .seal()
            .open(Purpose::Session, &key, "", sealed)
            .map_err(|e| e.to_string())
            .and_then(|json| {
                serde_json::from_str::<Record>(json)
                    .map_err(|e| format!("the session record at `{key}` is not valid: {e}"))
            })
            .and_then(|record| {
                if record.id == id {
                    Ok(record)
                } else {
                    Err(format!(
                        "the session record at `{key}` names another session"
                    ))
                }
            });
        match read {
            Ok(record) => Some(Stored {
                record,
                // Scores come back as decimal text; ms since the epoch fit
                // a double.
                last_active_ms: score.parse::<f64>().map_or(0, |ms| ms as i64),
            }),
            Err(why) => {
                tracing::warn!("ignoring a session in Redis: {why}");
                None
            }
        }
    }
}

/// A session's write slot in Redis: taken as a [`Lease`] for each write
/// call, so one call at a time writes in the session across the fleet.
#[derive(Debug, Clone)]
pub struct FleetSlot {
    store: Arc<RedisStore>,
    key: String,
    /// The session's record: no slot is taken once it is gone.
    record: String,
    terms: LeaseTerms,
}

impl FleetSlot {
    /// Take the slot, unless a call on some server holds it or the session
    /// has ended.
    pub(crate) async fn take(&self) -> Result<Result<Lease, Refused>, String> {
        Lease::acquire_beside(&self.store, self.key.clone(), &self.record, self.terms).await
    }

    /// Whether a call on some server holds the slot.
    pub(crate) async fn held(&self) -> Result<bool, String> {
        redis::cmd("EXISTS")
            .arg(&self.key)
            .query_async::<bool>(&mut self.store.connection())
            .await
            .map_err(|e| self.store.failure(&e))
    }
}
