//! [`Inbox`]: messages one server of a fleet sends another about something
//! the other runs (an MCP task, a call waiting between input-required
//! rounds), each sealed under the cluster key for its purpose and bound to
//! the inbox's Redis key.
//!
//! An inbox is a Redis list, `<prefix>:<name>:<id>`, of at most a set
//! number of messages, kept a set time after the last one came. Each
//! message is published on the inbox's feed to wake its reader, which also
//! reads it again now and then: pub/sub drops what is sent while it
//! reconnects. A message not sealed by the fleet is dropped when read.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use redis::Script;

use super::RedisStore;
use super::feed::Wakeups;
use super::seal::Purpose;

/// How often a reader reads its inbox again without a wake-up.
const REREAD: Duration = Duration::from_secs(1);

/// The most messages one read takes.
const BATCH: usize = 64;

/// The largest message an inbox carries (above the largest request body a
/// server takes by default, which a message relays): a larger one is not
/// sent, and one planted is dropped in Redis, never read.
pub const MAX_MESSAGE_BYTES: usize = 8 << 20;

/// The most bytes of messages one read takes (past it, the rest wait for
/// the next read).
const BATCH_BYTES: usize = 16 << 20;

/// `KEYS`: the inbox. `ARGV`: the most messages, the largest message, the
/// most bytes. The oldest messages, up to both bounds; any over the
/// largest size is dropped where it lies, unread.
static TAKE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local taken, bytes = {}, 0
         for _ = 1, tonumber(ARGV[1]) do
           if bytes >= tonumber(ARGV[3]) then break end
           local message = redis.call('LPOP', KEYS[1])
           if not message then break end
           if #message <= tonumber(ARGV[2]) then
             taken[#taken + 1] = message
             bytes = bytes + #message
           end
         end
         return taken",
    )
});

/// Why a message was not sent.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The inbox holds as many messages as it may.
    #[error("{held} messages wait for it already; try again later")]
    Full {
        /// How many wait.
        held: usize,
    },
    /// The message is larger than an inbox carries.
    #[error("a message of {bytes} bytes is over the {MAX_MESSAGE_BYTES} an inbox carries")]
    TooLarge {
        /// Its size, sealed.
        bytes: usize,
    },
    /// Redis did not answer.
    #[error("the fleet's store did not answer: {0}")]
    Store(String),
}

/// The inboxes of one kind, under one name and feed.
pub struct Inbox {
    store: Arc<RedisStore>,
    name: &'static str,
    purpose: Purpose,
    wakeups: Arc<Wakeups>,
    /// The most messages one inbox holds.
    max: usize,
    /// How long an inbox is kept after its last message.
    keep: Duration,
}

impl Inbox {
    /// Inboxes `<name>:<id>` in `store`, woken on the feed `<name>feed`,
    /// their messages sealed for `purpose`, each holding at most `max`
    /// messages and kept `keep` after the last came.
    pub fn new(
        store: Arc<RedisStore>,
        name: &'static str,
        purpose: Purpose,
        max: usize,
        keep: Duration,
    ) -> Self {
        let channel = store.key(&format!("{name}feed"), &[]);
        Self {
            wakeups: Wakeups::new(store.clone(), channel, REREAD),
            store,
            name,
            purpose,
            max,
            keep,
        }
    }

    fn key(&self, id: &str) -> String {
        self.store.key(self.name, &[id])
    }

    /// Put `message` in inbox `id` and wake its reader.
    pub async fn send(&self, id: &str, message: &str) -> Result<(), SendError> {
        let key = self.key(id);
        let sealed = self.store.seal().seal(self.purpose, &key, "", message);
        if sealed.len() > MAX_MESSAGE_BYTES {
            return Err(SendError::TooLarge {
                bytes: sealed.len(),
            });
        }
        let mut connection = self.store.connection();
        let failed = |e: redis::RedisError| SendError::Store(self.store.failure(&e));
        let held: usize = redis::cmd("LLEN")
            .arg(&key)
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        if held >= self.max {
            return Err(SendError::Full { held });
        }
        redis::pipe()
            .rpush(&key, sealed)
            .pexpire(
                &key,
                i64::try_from(self.keep.as_millis()).unwrap_or(i64::MAX),
            )
            .publish(self.wakeups.channel(), id)
            .query_async::<()>(&mut connection)
            .await
            .map_err(failed)
    }

    /// Woken when a message for inbox `id` may wait.
    pub fn watch(&self, id: &str) -> tokio::sync::broadcast::Receiver<()> {
        self.wakeups.watch(id)
    }

    /// The messages waiting in inbox `id`, oldest first, at most a batch
    /// (of 64 messages and 16 MiB) at a time, read as JSON;
    /// ones over [`MAX_MESSAGE_BYTES`] are dropped unread, ones not sealed
    /// by the fleet or not of type `T` dropped, and a store that does not
    /// answer gives none (logged).
    pub async fn take<T: serde::de::DeserializeOwned>(&self, id: &str) -> Vec<T> {
        let key = self.key(id);
        let taken: redis::RedisResult<Vec<String>> = TAKE
            .key(&key)
            .arg(BATCH)
            .arg(MAX_MESSAGE_BYTES)
            .arg(BATCH_BYTES)
            .invoke_async(&mut self.store.connection())
            .await;
        let taken = match taken {
            Ok(taken) => taken,
            Err(e) => {
                tracing::warn!(%key, "cannot read an inbox: {}", self.store.failure(&e));
                return Vec::new();
            }
        };
        taken
            .into_iter()
            .filter_map(
                |sealed| match self.store.seal().open(self.purpose, &key, "", &sealed) {
                    Ok(body) => serde_json::from_str(body).ok(),
                    Err(e) => {
                        tracing::warn!("a message is dropped: {e}");
                        None
                    }
                },
            )
            .collect()
    }

    /// How often a reader reads its inbox without a wake-up.
    pub fn reread(&self) -> Duration {
        REREAD
    }
}
