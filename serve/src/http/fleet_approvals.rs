//! The approvals a fleet waits for, listed by any of its servers
//! (`[state] backend = "redis"`): each server mirrors the approvals its
//! calls ask for and how they end, and `GET …/approvals` reads them all.
//!
//! The keys, under the store's prefix:
//!
//! - `approval:<id>`: a pending approval as listed, expiring with its wait;
//! - `approvals`: a sorted set of the pending ones' call ids, scored by
//!   when they expire (past ones are pruned as the set is read);
//! - `approvalsdone`: the latest resolved ones, newest first, as listed
//!   (without input), at most [`KEEP_RESOLVED`].
//!
//! A pending approval whose server died is not listed: its call can no
//! longer be approved (`409 call_owner_gone`). Entries are sealed under
//! the cluster key (`toolhost::redis_store::seal`), a pending one bound to
//! its call: a writer of Redis cannot show an approver a call that is not
//! there, or another input for one that is.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use toolhost::redis_store::RedisStore;
use toolhost::redis_store::seal::Purpose;

use super::approval_log::KEEP_RESOLVED;

/// The largest input a pending approval lists across the fleet; a larger
/// one is listed as `inputTruncated` (the server running the call lists it
/// whole).
const MAX_SHARED_INPUT: usize = 64 * 1024;

/// The approvals of a fleet, in Redis.
pub struct FleetApprovals {
    store: Arc<RedisStore>,
}

impl FleetApprovals {
    /// Approvals kept in `store`.
    pub fn new(store: Arc<RedisStore>) -> Self {
        Self { store }
    }

    fn entry_key(&self, id: &str) -> String {
        self.store.key("approval", &[id])
    }

    /// Record that call `id` waits for an approval until `expires_at`,
    /// listed as `entry`.
    pub async fn asked(
        &self,
        id: &str,
        mut entry: Value,
        expires_at: DateTime<Utc>,
    ) -> Result<(), String> {
        let input_bytes = entry.get("input").map_or(0, |i| i.to_string().len());
        if input_bytes > MAX_SHARED_INPUT
            && let Some(object) = entry.as_object_mut()
        {
            object.remove("input");
            object.insert("inputTruncated".into(), json!(true));
        }
        let ttl = (expires_at - Utc::now()).num_milliseconds().max(1);
        let key = self.entry_key(id);
        let sealed = self
            .store
            .seal()
            .seal(Purpose::Approval, &key, "", &entry.to_string());
        redis::pipe()
            .atomic()
            .set(&key, sealed)
            .arg("PX")
            .arg(ttl)
            .ignore()
            .zadd(
                self.store.key("approvals", &[]),
                id,
                expires_at.timestamp_millis(),
            )
            .ignore()
            .query_async::<()>(&mut self.store.connection())
            .await
            .map_err(|e| self.store.failure(&e))
    }

    /// Record that call `id`'s approval ended, listed as `entry`.
    pub async fn resolved(&self, id: &str, entry: &Value) -> Result<(), String> {
        let done = self.store.key("approvalsdone", &[]);
        let sealed = self
            .store
            .seal()
            .seal(Purpose::Approval, &done, "", &entry.to_string());
        redis::pipe()
            .atomic()
            .del(self.entry_key(id))
            .ignore()
            .zrem(self.store.key("approvals", &[]), id)
            .ignore()
            .lpush(&done, sealed)
            .ignore()
            .ltrim(&done, 0, KEEP_RESOLVED as isize - 1)
            .ignore()
            .query_async::<()>(&mut self.store.connection())
            .await
            .map_err(|e| self.store.failure(&e))
    }

    /// `{"pending": [...], "resolved": [...]}` for the whole fleet: the
    /// pending approvals whose server still runs their call, oldest first,
    /// and the latest resolved, newest first.
    pub async fn list(&self) -> Result<Value, String> {
        let index = self.store.key("approvals", &[]);
        let now = Utc::now().timestamp_millis();
        let mut connection = self.store.connection();
        let (ids, resolved): (Vec<String>, Vec<String>) = redis::pipe()
            .atomic()
            .zrembyscore(&index, "-inf", now)
            .ignore()
            .zrangebyscore(&index, now, "+inf")
            .lrange(
                self.store.key("approvalsdone", &[]),
                0,
                KEEP_RESOLVED as isize - 1,
            )
            .query_async(&mut connection)
            .await
            .map_err(|e| self.store.failure(&e))?;
        let mut pending = Vec::new();
        if !ids.is_empty() {
            let mut reads = redis::pipe();
            for id in &ids {
                reads
                    .get(self.entry_key(id))
                    .exists(self.store.key("callowner", &[id]));
            }
            let read: Vec<(Option<String>, bool)> = reads
                .query_async(&mut connection)
                .await
                .map_err(|e| self.store.failure(&e))?;
            pending.extend(
                ids.iter()
                    .zip(read)
                    .filter(|(_, (_, owned))| *owned)
                    .filter_map(|(id, (entry, _))| self.opened(&self.entry_key(id), &entry?)),
            );
        }
        pending.sort_by(|a, b| a["requestedAt"].as_str().cmp(&b["requestedAt"].as_str()));
        let done = self.store.key("approvalsdone", &[]);
        let resolved: Vec<Value> = resolved
            .iter()
            .filter_map(|entry| self.opened(&done, entry))
            .collect();
        Ok(json!({ "pending": pending, "resolved": resolved }))
    }

    /// The entry sealed at `key`, if a server of the fleet sealed it there.
    fn opened(&self, key: &str, sealed: &str) -> Option<Value> {
        let json = self
            .store
            .seal()
            .open(Purpose::Approval, key, "", sealed)
            .inspect_err(|e| tracing::warn!("ignoring an approval: {e}"))
            .ok()?;
        serde_json::from_str(json).ok()
    }
}
