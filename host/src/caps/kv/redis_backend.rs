//! The key-value backend on Redis, for several hosts sharing one store.
//!
//! Each bucket keeps its values at `<prefix>:kv:<len>:<bucket>:<key>` and
//! an index of its keys in a sorted set, `<prefix>:kvkeys:<bucket>` (every
//! score 0, so `ZRANGEBYLEX` walks the keys in byte order: the same order
//! and cursor meaning as the embedded store, and never a `SCAN` of the
//! whole keyspace). Every write changes the value and the index in one
//! Lua script (or one `MULTI`), so they never disagree. Compare-and-swap
//! compares the stored bytes inside the script: no `WATCH`, which belongs
//! to one connection and cannot work on a shared multiplexed one.

use std::sync::{Arc, LazyLock};

use redis::{Script, Value};

use super::{BackendError, KvBackend, ManyValues};
use crate::redis_store::RedisStore;

/// The embedded store's semantics, on a Redis server every host shares.
pub struct RedisBackend {
    store: Arc<RedisStore>,
}

impl RedisBackend {
    /// Buckets kept in `store`.
    pub fn new(store: Arc<RedisStore>) -> Self {
        Self { store }
    }

    fn value_key(&self, bucket: &str, key: &str) -> String {
        self.store.key("kv", &[bucket, key])
    }

    fn index_key(&self, bucket: &str) -> String {
        self.store.key("kvkeys", &[bucket])
    }

    fn error(&self, e: redis::RedisError) -> BackendError {
        BackendError(self.store.failure(&e))
    }
}

/// `KEYS`: value, index. `ARGV`: value, key.
static SET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "redis.call('SET', KEYS[1], ARGV[1])
         redis.call('ZADD', KEYS[2], 0, ARGV[2])
         return 1",
    )
});

/// `KEYS`: value, index. `ARGV`: key.
static DELETE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "redis.call('DEL', KEYS[1])
         redis.call('ZREM', KEYS[2], ARGV[1])
         return 1",
    )
});

/// `KEYS`: value, index. `ARGV`: `1` if a value is expected (else `0`),
/// the expected bytes, the new bytes, key. 1 if swapped, 0 if not.
static COMPARE_AND_SWAP: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local current = redis.call('GET', KEYS[1])
         if ARGV[1] == '1' then
           if current ~= ARGV[2] then return 0 end
         elseif current then
           return 0
         end
         redis.call('SET', KEYS[1], ARGV[3])
         redis.call('ZADD', KEYS[2], 0, ARGV[4])
         return 1",
    )
});

/// `KEYS`: index, then one value key per pair. `ARGV`: the keys, then the
/// values, in the same order.
static SET_MANY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local n = #ARGV / 2
         for i = 1, n do
           redis.call('SET', KEYS[i + 1], ARGV[n + i])
           redis.call('ZADD', KEYS[1], 0, ARGV[i])
         end
         return n",
    )
});

/// `KEYS`: index, then one value key per key. `ARGV`: the keys.
static DELETE_MANY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "for i = 1, #ARGV do
           redis.call('DEL', KEYS[i + 1])
           redis.call('ZREM', KEYS[1], ARGV[i])
         end
         return #ARGV",
    )
});

/// `KEYS`: the value keys. `ARGV`: the byte allowance. The values in
/// order (nil for absent keys) while they fit, and, if one did not, its
/// size: nothing larger than the allowance ever leaves Redis.
static GET_MANY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local room = tonumber(ARGV[1])
         local values = {}
         for i, key in ipairs(KEYS) do
           local size = redis.call('STRLEN', key)
           if size > room then return {values, size} end
           room = room - size
           values[i] = redis.call('GET', key)
         end
         return {values}",
    )
});

/// The `GET_MANY` script's answer.
fn many_values(answer: Value) -> Result<ManyValues, BackendError> {
    let unexpected = || BackendError("Redis gave an unexpected answer to a batch read".into());
    let Value::Array(mut parts) = answer else {
        return Err(unexpected());
    };
    let stopped_at = match parts.len() {
        1 => None,
        2 => match parts.pop() {
            Some(Value::Int(size)) => Some(usize::try_from(size).map_err(|_| unexpected())?),
            _ => return Err(unexpected()),
        },
        _ => return Err(unexpected()),
    };
    let Some(Value::Array(values)) = parts.pop() else {
        return Err(unexpected());
    };
    let values = values
        .into_iter()
        .map(|value| match value {
            Value::Nil => Ok(None),
            Value::BulkString(bytes) => Ok(Some(bytes)),
            _ => Err(unexpected()),
        })
        .collect::<Result<_, _>>()?;
    Ok(ManyValues { values, stopped_at })
}

#[async_trait::async_trait]
impl KvBackend for RedisBackend {
    async fn get(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, BackendError> {
        redis::cmd("GET")
            .arg(self.value_key(bucket, key))
            .query_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(e))
    }

    async fn get_many(
        &self,
        bucket: &str,
        keys: &[String],
        max_bytes: usize,
    ) -> Result<ManyValues, BackendError> {
        let mut script = GET_MANY.prepare_invoke();
        for key in keys {
            script.key(self.value_key(bucket, key));
        }
        let answer: Value = script
            .arg(max_bytes)
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(e))?;
        many_values(answer)
    }

    async fn set(&self, bucket: &str, key: &str, value: Vec<u8>) -> Result<(), BackendError> {
        let _: i64 = SET
            .key(self.value_key(bucket, key))
            .key(self.index_key(bucket))
            .arg(value)
            .arg(key)
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    async fn delete(&self, bucket: &str, key: &str) -> Result<(), BackendError> {
        let _: i64 = DELETE
            .key(self.value_key(bucket, key))
            .key(self.index_key(bucket))
            .arg(key)
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    async fn list_keys(
        &self,
        bucket: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, BackendError> {
        let start = after.map_or_else(|| "-".to_string(), |key| format!("({key}"));
        let keys: Vec<Vec<u8>> = redis::cmd("ZRANGEBYLEX")
            .arg(self.index_key(bucket))
            .arg(start)
            .arg("+")
            .arg("LIMIT")
            .arg(0)
            .arg(limit)
            .query_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(e))?;
        keys.into_iter()
            .map(|key| {
                String::from_utf8(key)
                    .map_err(|_| BackendError("a key in Redis is not UTF-8".to_string()))
            })
            .collect()
    }

    async fn increment(&self, bucket: &str, key: &str, delta: i64) -> Result<i64, BackendError> {
        // A script would see INCRBY's answer as a Lua number (a double),
        // wrong past 2^53: MULTI/EXEC passes the integer through.
        let answer: redis::RedisResult<(i64, i64)> = redis::pipe()
            .atomic()
            .cmd("INCRBY")
            .arg(self.value_key(bucket, key))
            .arg(delta)
            .cmd("ZADD")
            .arg(self.index_key(bucket))
            .arg(0)
            .arg(key)
            .query_async(&mut self.store.connection())
            .await;
        match answer {
            Ok((next, _)) => Ok(next),
            Err(e) if e.code() == Some("ERR") => Err(BackendError(format!(
                "the value is not an integer counter, or adding {delta} overflows i64"
            ))),
            Err(e) => Err(self.error(e)),
        }
    }

    async fn compare_and_swap(
        &self,
        bucket: &str,
        key: &str,
        expected: Option<Vec<u8>>,
        new: Vec<u8>,
    ) -> Result<bool, BackendError> {
        let swapped: i64 = COMPARE_AND_SWAP
            .key(self.value_key(bucket, key))
            .key(self.index_key(bucket))
            .arg(if expected.is_some() { "1" } else { "0" })
            .arg(expected.unwrap_or_default())
            .arg(new)
            .arg(key)
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(e))?;
        Ok(swapped == 1)
    }

    async fn set_many(
        &self,
        bucket: &str,
        pairs: Vec<(String, Vec<u8>)>,
    ) -> Result<(), BackendError> {
        if pairs.is_empty() {
            return Ok(());
        }
        let mut script = SET_MANY.key(self.index_key(bucket));
        for (key, _) in &pairs {
            script.key(self.value_key(bucket, key));
            script.arg(key.as_str());
        }
        for (_, value) in pairs {
            script.arg(value);
        }
        let _: i64 = script
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    async fn delete_many(&self, bucket: &str, keys: Vec<String>) -> Result<(), BackendError> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut script = DELETE_MANY.key(self.index_key(bucket));
        for key in &keys {
            script.key(self.value_key(bucket, key));
            script.arg(key.as_str());
        }
        let _: i64 = script
            .invoke_async(&mut self.store.connection())
            .await
            .map_err(|e| self.error(e))?;
        Ok(())
    }
}
