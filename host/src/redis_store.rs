//! The connection to Redis when `[state] backend = "redis"`: a small pool of
//! multiplexed connections that reconnect by themselves, the key layout every
//! shared store uses, and the health `/healthz` reports.
//!
//! A command is never retried here: a write whose reply was lost may have
//! been applied, and sending it again could apply it twice (a counter
//! incremented twice). Failures reach the caller as errors naming Redis.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use seal::Seal;

/// The cluster key unit tests seal with.
#[cfg(test)]
pub(crate) const TEST_CLUSTER_KEY: [u8; 32] = [42; 32];

pub mod feed;
pub mod inbox;
pub mod lease;
pub mod seal;

/// How the shared store answered its last health check.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `"redis"`.
    pub backend: &'static str,
    /// Whether it answered `PING`.
    pub reachable: bool,
    /// The round trip of the `PING`, in microseconds, when it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ping_us: Option<u64>,
    /// Why it did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A pool of connections to one Redis server and the prefix of every key.
pub struct RedisStore {
    /// Opens the pub/sub connections, which cannot be multiplexed.
    client: redis::Client,
    connect_timeout: std::time::Duration,
    /// How long one command may take.
    response_timeout: std::time::Duration,
    connections: Vec<ConnectionManager>,
    next: AtomicUsize,
    /// Seals the records that must be a fleet server's.
    seal: Seal,
    prefix: String,
    /// The URL as logs may show it (no password).
    shown_url: String,
    /// False from a failure to reach Redis until a `PING` answers again.
    reachable: AtomicBool,
    /// The last health check and when it ended, for probes anyone may send.
    last_health: tokio::sync::Mutex<Option<(Instant, Health)>>,
}

/// The prefix of every key when none is configured.
pub const DEFAULT_KEY_PREFIX: &str = "toolhost";
/// Connections to Redis when none is configured.
pub const DEFAULT_POOL_SIZE: usize = 4;
/// How long connecting to Redis may take when not configured.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a Redis command may take when not configured.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// How to reach Redis and name the keys: `[state]` gives them
/// (`StateSettings::redis_options`).
#[derive(Clone)]
pub struct RedisOptions {
    /// `redis://` or `rediss://`, perhaps with a user and password.
    pub url: String,
    /// The user to log in as, over the URL's.
    pub username: Option<String>,
    /// The password, over the URL's (never shown).
    pub password: Option<String>,
    /// A CA certificate (PEM) to trust for `rediss://`.
    pub tls_ca_file: Option<PathBuf>,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long one command may take.
    pub response_timeout: Duration,
    /// Connections to open.
    pub pool_size: usize,
    /// The prefix of every key.
    pub key_prefix: String,
}

impl RedisOptions {
    /// Reach `url` with the defaults.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            username: None,
            password: None,
            tls_ca_file: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            pool_size: DEFAULT_POOL_SIZE,
            key_prefix: DEFAULT_KEY_PREFIX.to_string(),
        }
    }
}

/// The password may be a secret: `Debug` shows the URL redacted and
/// whether there is a password.
impl std::fmt::Debug for RedisOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisOptions")
            .field("url", &redact_url(&self.url))
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("tls_ca_file", &self.tls_ca_file)
            .field("pool_size", &self.pool_size)
            .field("key_prefix", &self.key_prefix)
            .finish_non_exhaustive()
    }
}

/// `url` with any password in it replaced by `***`, for logs and errors.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}")
        }
        None => url.to_string(),
    }
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.shown_url)
            .field("prefix", &self.prefix)
            .field("connections", &self.connections.len())
            .finish()
    }
}

impl RedisStore {
    /// Open the pool `options` describe, sealing records with
    /// `cluster_key`. Connections are made on first use and again after
    /// every failure, so a host starts (and `/healthz` says so) while Redis
    /// is down and recovers when it is back.
    pub fn open(options: &RedisOptions, cluster_key: &[u8]) -> anyhow::Result<Arc<Self>> {
        let url = options.url.as_str();
        let shown_url = redact_url(url);
        let mut info = redis::IntoConnectionInfo::into_connection_info(url)
            .with_context(|| format!("`[state] redis_url` = {shown_url:?} is not a Redis URL"))?;
        let mut redis_settings = info.redis_settings().clone();
        if let Some(user) = &options.username {
            redis_settings = redis_settings.set_username(user);
        }
        if let Some(password) = &options.password {
            redis_settings = redis_settings.set_password(password);
        }
        info = info.set_redis_settings(redis_settings);
        let client = match &options.tls_ca_file {
            Some(path) => {
                let root_cert = std::fs::read(path).with_context(|| {
                    format!("cannot read `[state] tls_ca_file` {}", path.display())
                })?;
                redis::Client::build_with_tls(
                    info,
                    redis::TlsCertificates {
                        client_tls: None,
                        root_cert: Some(root_cert),
                    },
                )
            }
            None => redis::Client::open(info),
        }
        .with_context(|| format!("cannot use Redis at {shown_url}"))?;
        // One attempt per reconnect, bounded: a call waits at most the
        // connect timeout for a Redis that is down, never a backoff series.
        let config = ConnectionManagerConfig::new()
            .set_number_of_retries(0)
            .set_connection_timeout(Some(options.connect_timeout))
            .set_response_timeout(Some(options.response_timeout));
        let connections = (0..options.pool_size)
            .map(|_| ConnectionManager::new_lazy_with_config(client.clone(), config.clone()))
            .collect::<Result<Vec<_>, _>>()
            .with_context(|| format!("cannot use Redis at {shown_url}"))?;
        Ok(Arc::new(Self {
            client,
            connect_timeout: options.connect_timeout,
            response_timeout: options.response_timeout,
            connections,
            next: AtomicUsize::new(0),
            seal: Seal::new(cluster_key, &options.key_prefix),
            prefix: options.key_prefix.clone(),
            shown_url,
            reachable: AtomicBool::new(true),
            last_health: tokio::sync::Mutex::default(),
        }))
    }

    /// A connection to send one request on (round robin over the pool).
    pub fn connection(&self) -> ConnectionManager {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.connections.len();
        self.connections[i].clone()
    }

    /// A blocking connection of its own, with the store's timeouts, for
    /// code that runs where it may block (as file reads and writes do).
    pub fn blocking_connection(&self) -> redis::RedisResult<redis::Connection> {
        let connection = self
            .client
            .get_connection_with_timeout(self.connect_timeout)?;
        connection.set_read_timeout(Some(self.response_timeout))?;
        connection.set_write_timeout(Some(self.response_timeout))?;
        Ok(connection)
    }

    /// A connection of its own subscribed to `channel`, and the stream of
    /// its messages, which ends when the connection does.
    pub async fn subscribe(&self, channel: &str) -> Result<redis::aio::PubSubStream, String> {
        let connect = async {
            let mut pubsub = self.client.get_async_pubsub().await?;
            pubsub.subscribe(channel).await?;
            Ok::<_, redis::RedisError>(pubsub.into_on_message())
        };
        match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(Ok(stream)) => Ok(stream),
            Ok(Err(e)) => Err(self.failure(&e)),
            Err(_) => Err(format!(
                "Redis at {} did not answer in time",
                self.shown_url
            )),
        }
    }

    /// The key of `kind` named by `parts`: `<prefix>:<kind>:<len>:<part>…`.
    /// Each part but the last carries its length, so no two different
    /// lists of parts (a bucket named `a:b` and key `c`, or `a` and `b:c`)
    /// ever give the same key.
    pub fn key(&self, kind: &str, parts: &[&str]) -> String {
        let mut key = format!("{}:{kind}", self.prefix);
        for (i, part) in parts.iter().enumerate() {
            key.push(':');
            if i + 1 < parts.len() {
                key.push_str(&part.len().to_string());
                key.push(':');
            }
            key.push_str(part);
        }
        key
    }

    /// How the fleet's records that decide what a server does are sealed.
    pub fn seal(&self) -> &Seal {
        &self.seal
    }

    /// The URL, without its password.
    pub fn shown_url(&self) -> &str {
        &self.shown_url
    }

    /// Whether Redis answers a `PING` on every connection of the pool now,
    /// and how fast. A connection whose last attempt failed answers its
    /// first command with that failure and reconnects: it is asked twice,
    /// so one health check brings the whole pool back once Redis is.
    pub async fn health(&self) -> Health {
        let started = Instant::now();
        let pings = self.connections.iter().map(|connection| async move {
            let mut connection = connection.clone();
            let mut answer = ping(&mut connection).await;
            if answer.is_err() {
                answer = ping(&mut connection).await;
            }
            answer
        });
        let failure = futures::future::join_all(pings)
            .await
            .into_iter()
            .find_map(Result::err);
        match failure {
            None => {
                self.reachable.store(true, Ordering::Relaxed);
                Health {
                    backend: "redis",
                    reachable: true,
                    ping_us: Some(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX)),
                    error: None,
                }
            }
            Some(e) => Health {
                backend: "redis",
                reachable: false,
                ping_us: None,
                error: Some(self.failure(&e)),
            },
        }
    }

    /// [`RedisStore::health`] at most once per `max_age` (sooner when a
    /// call has since found Redis gone or back), one check at a time: what an unauthenticated probe (`/healthz`) gets, so it cannot
    /// make the host send Redis a `PING` per request.
    pub async fn recent_health(&self, max_age: std::time::Duration) -> Health {
        let mut last = self.last_health.lock().await;
        // A call's failure or recovery since makes it stale at once.
        if let Some((at, health)) = last.as_ref()
            && at.elapsed() < max_age
            && health.reachable == self.reachable.load(Ordering::Relaxed)
        {
            return health.clone();
        }
        let health = self.health().await;
        *last = Some((Instant::now(), health.clone()));
        health
    }

    /// Ok when Redis can be used now: at once while nothing has failed,
    /// else after a `PING` answers (at most the connect timeout). Calls
    /// that need Redis ask first, so while it is down they are refused
    /// before any tool code runs, and they run again once it is back.
    pub async fn ensure_reachable(&self) -> Result<(), String> {
        if self.reachable.load(Ordering::Relaxed) {
            return Ok(());
        }
        let health = self.health().await;
        match health.error {
            None => Ok(()),
            Some(error) => Err(error),
        }
    }

    /// `error` as callers and logs show it, naming Redis and where it is;
    /// a failure to reach it marks it unreachable until a `PING` answers.
    pub fn failure(&self, error: &redis::RedisError) -> String {
        let unreachable = error.is_io_error()
            || error.is_connection_dropped()
            || error.is_connection_refusal()
            || error.is_timeout();
        if unreachable && self.reachable.swap(false, Ordering::Relaxed) {
            tracing::warn!(url = %self.shown_url, %error, "Redis is unreachable");
        }
        if error.is_timeout() {
            format!("Redis at {} did not answer in time", self.shown_url)
        } else if unreachable {
            format!("Redis at {} is unreachable: {error}", self.shown_url)
        } else {
            format!("Redis at {}: {error}", self.shown_url)
        }
    }
}

async fn ping(connection: &mut ConnectionManager) -> redis::RedisResult<String> {
    redis::cmd("PING").query_async(connection).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(prefix: &str) -> Arc<RedisStore> {
        let options = RedisOptions {
            key_prefix: prefix.into(),
            ..RedisOptions::new("redis://127.0.0.1:1")
        };
        RedisStore::open(&options, &TEST_CLUSTER_KEY).unwrap()
    }

    #[tokio::test]
    async fn keys_never_collide_across_parts() {
        let store = store("p");
        assert_eq!(store.key("kv", &["a:b", "c"]), "p:kv:3:a:b:c");
        assert_ne!(
            store.key("kv", &["a:b", "c"]),
            store.key("kv", &["a", "b:c"])
        );
        assert_eq!(store.key("kvkeys", &["b"]), "p:kvkeys:b");
    }

    #[tokio::test]
    async fn probes_share_one_recent_check_until_a_call_finds_redis_gone() {
        let Some(mut server) = toolhost_test_artifacts::redis::RedisServer::start() else {
            return;
        };
        let store = RedisStore::open(&RedisOptions::new(server.url()), &TEST_CLUSTER_KEY).unwrap();
        let hour = std::time::Duration::from_secs(3600);
        assert!(store.recent_health(hour).await.reachable);
        server.kill();
        assert!(
            store.recent_health(hour).await.reachable,
            "a probe within max_age gets the last check, without asking Redis"
        );
        let err = store.ensure_reachable().await;
        assert!(err.is_ok(), "nothing has failed yet: no check");
        let _ = redis::cmd("GET")
            .arg("k")
            .query_async::<Option<String>>(&mut store.connection())
            .await
            .map_err(|e| store.failure(&e));
        let health = store.recent_health(hour).await;
        assert!(!health.reachable, "a call found it gone: checked again");
    }

    #[tokio::test]
    async fn an_unreachable_server_is_reported_not_waited_for() {
        let health = store("p").health().await;
        assert!(!health.reachable);
        let error = health.error.unwrap();
        assert!(error.contains("Redis at redis://127.0.0.1:1"), "{error}");
    }
}
