//! `[state]`: where the host keeps what outlives a call — embedded files on
//! this machine (the default), or a Redis server several hosts share.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use serde::Deserialize;

use crate::redis_store::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_KEY_PREFIX, DEFAULT_POOL_SIZE, DEFAULT_RESPONSE_TIMEOUT,
    RedisOptions, RedisStore, redact_url,
};

/// The most connections one host opens to Redis.
pub const MAX_POOL_SIZE: usize = 64;

/// Which store keeps the host's shared state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// Files under the state directory (redb for key-value): one machine.
    #[default]
    Embedded,
    /// A Redis server (6.2 or newer) every host of a fleet points at.
    Redis,
}

/// `[state]`: the backend and how to reach it.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateSettings {
    /// `"embedded"` (default) or `"redis"`.
    #[serde(default)]
    pub backend: Backend,
    /// `redis://host:port/db` or, for TLS, `rediss://host:port/db`.
    pub redis_url: Option<String>,
    /// The ACL user, when not in the URL.
    pub username: Option<String>,
    /// The name of the environment variable that holds the password (never
    /// the password itself, which would sit in a file tools may be shown).
    pub password_env: Option<String>,
    /// A PEM file of CA certificates to trust for `rediss://` instead of the
    /// bundled web roots (a private CA).
    pub tls_ca_file: Option<PathBuf>,
    /// Every key the host writes starts with `<key_prefix>:` (default
    /// `toolhost`), so several fleets can share one Redis.
    pub key_prefix: Option<String>,
    /// Connections to Redis, each multiplexing every request (default 4).
    pub pool_size: Option<usize>,
    /// How long connecting may take, in milliseconds (default 2000).
    pub connect_timeout_ms: Option<u64>,
    /// How long one command may take, in milliseconds (default 2000); a
    /// call waiting longer gets a clear error instead of hanging.
    pub response_timeout_ms: Option<u64>,
    /// A folder every server mounts, to share compilations in instead of
    /// each compiling every tool (opt-in: they are native code). Needs
    /// `cluster_key_env`.
    pub shared_compile_cache: Option<PathBuf>,
    /// The name of the environment variable holding the cluster key (at
    /// least 32 bytes), which every server of a fleet shares: the records
    /// in Redis that decide what a server does, and entries of the shared
    /// compile cache, are authenticated with it, so a server obeys only what
    /// a holder of the key wrote. Needed with `backend = "redis"`.
    pub cluster_key_env: Option<String>,
    /// Where sessions keep their workspaces, artifacts and reminders: a
    /// folder every server mounts (NFS, a shared volume). Needed with
    /// `backend = "redis"`; relative to the host directory.
    pub workspaces_dir: Option<PathBuf>,
    /// The folder tools granted `state` see at `/state`, when it is not
    /// the host's own: every server's mount of one shared folder. Needed
    /// with `backend = "redis"` when a tool is granted `state`.
    pub state_files_dir: Option<PathBuf>,
    /// How long a session's write slot, or a parked call's claim on the
    /// server running it, stays taken in Redis without a renewal, in
    /// milliseconds (default 10000): the longest a crashed server keeps a
    /// session busy, or its parked calls answerable. Renewed every third.
    pub session_lease_ms: Option<u64>,
}

/// The write slot's lease when `[state] session_lease_ms` is not set.
pub const DEFAULT_SESSION_LEASE_MS: u64 = 10_000;

/// The shortest cluster key accepted, in bytes.
pub const MIN_CLUSTER_KEY_BYTES: usize = 32;

/// The shared compile cache `[state]` opts into: where it is, and the key
/// its entries are authenticated with.
#[derive(Clone)]
pub struct SharedCompileCache {
    /// The folder every server mounts.
    pub dir: PathBuf,
    /// The cluster key.
    pub key: std::sync::Arc<[u8]>,
}

/// The key is a secret: `Debug` shows only the folder.
impl std::fmt::Debug for SharedCompileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedCompileCache")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// The URL may carry a password: `Debug` shows only where it points.
impl std::fmt::Debug for StateSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateSettings")
            .field("backend", &self.backend)
            .field("redis_url", &self.redis_url.as_deref().map(redact_url))
            .field("username", &self.username)
            .field("password_env", &self.password_env)
            .field("tls_ca_file", &self.tls_ca_file)
            .field("key_prefix", &self.key_prefix)
            .field("pool_size", &self.pool_size)
            .field("connect_timeout_ms", &self.connect_timeout_ms)
            .field("response_timeout_ms", &self.response_timeout_ms)
            .field("shared_compile_cache", &self.shared_compile_cache)
            .field("cluster_key_env", &self.cluster_key_env)
            .field("workspaces_dir", &self.workspaces_dir)
            .field("state_files_dir", &self.state_files_dir)
            .field("session_lease_ms", &self.session_lease_ms)
            .finish()
    }
}

impl StateSettings {
    /// Check the settings, naming the key at fault.
    pub fn validate(&self) -> anyhow::Result<()> {
        match (&self.shared_compile_cache, &self.cluster_key_env) {
            (Some(_), None) => anyhow::bail!(
                "`shared_compile_cache` needs `cluster_key_env`: entries others wrote are \
                 loaded only if the cluster key authenticates them"
            ),
            (None, Some(_)) if self.backend == Backend::Embedded => anyhow::bail!(
                "`cluster_key_env` is used with `backend = \"redis\"` or \
                 `shared_compile_cache`"
            ),
            _ => {}
        }
        let redis_only = [
            ("redis_url", self.redis_url.is_some()),
            ("username", self.username.is_some()),
            ("password_env", self.password_env.is_some()),
            ("tls_ca_file", self.tls_ca_file.is_some()),
            ("key_prefix", self.key_prefix.is_some()),
            ("pool_size", self.pool_size.is_some()),
            ("connect_timeout_ms", self.connect_timeout_ms.is_some()),
            ("response_timeout_ms", self.response_timeout_ms.is_some()),
            ("workspaces_dir", self.workspaces_dir.is_some()),
            ("state_files_dir", self.state_files_dir.is_some()),
            ("session_lease_ms", self.session_lease_ms.is_some()),
        ];
        if self.backend == Backend::Embedded {
            if let Some((key, _)) = redis_only.iter().find(|(_, set)| *set) {
                anyhow::bail!("`{key}` is a Redis setting: it needs `backend = \"redis\"`");
            }
            return Ok(());
        }
        let url = self
            .redis_url
            .as_deref()
            .ok_or_else(|| anyhow::anyhow!("`backend = \"redis\"` needs `redis_url`"))?;
        anyhow::ensure!(
            url.starts_with("redis://") || url.starts_with("rediss://"),
            "`redis_url` = {:?} must start with redis:// or rediss:// (TLS)",
            redact_url(url)
        );
        anyhow::ensure!(
            self.workspaces_dir.is_some(),
            "`backend = \"redis\"` needs `workspaces_dir`: a folder every server mounts, \
             where sessions keep their workspaces (any server may run a session's next call)"
        );
        if let Some(ms) = self.session_lease_ms {
            anyhow::ensure!(
                (1_000..=600_000).contains(&ms),
                "`session_lease_ms` = {ms}: use 1000 to 600000"
            );
        }
        if self.tls_ca_file.is_some() {
            anyhow::ensure!(
                url.starts_with("rediss://"),
                "`tls_ca_file` needs a rediss:// `redis_url`"
            );
        }
        if let Some(prefix) = &self.key_prefix {
            anyhow::ensure!(
                !prefix.is_empty()
                    && prefix.len() <= 64
                    && prefix
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)),
                "`key_prefix` = {prefix:?}: use 1-64 characters of a-z, A-Z, 0-9, `-`, `_` and `.`"
            );
        }
        if let Some(size) = self.pool_size {
            anyhow::ensure!(
                (1..=MAX_POOL_SIZE).contains(&size),
                "`pool_size` = {size}: use 1 to {MAX_POOL_SIZE}"
            );
        }
        for (key, value) in [
            ("connect_timeout_ms", self.connect_timeout_ms),
            ("response_timeout_ms", self.response_timeout_ms),
        ] {
            if let Some(ms) = value {
                anyhow::ensure!(
                    (1..=600_000).contains(&ms),
                    "`{key}` = {ms}: use 1 to 600000"
                );
            }
        }
        anyhow::ensure!(
            self.cluster_key_env.is_some(),
            "`backend = \"redis\"` needs `cluster_key_env`: the fleet's records in Redis \
             (sessions, versions, reminders, answers to parked calls) are obeyed only if the \
             cluster key authenticates them, so a writer of Redis cannot forge them"
        );
        Ok(())
    }

    /// The shared compile cache, with its key read from the environment;
    /// `None` unless `shared_compile_cache` is set.
    pub fn shared_compile_cache(&self) -> anyhow::Result<Option<SharedCompileCache>> {
        let Some(dir) = &self.shared_compile_cache else {
            return Ok(None);
        };
        Ok(Some(SharedCompileCache {
            dir: dir.clone(),
            key: self.cluster_key()?.into(),
        }))
    }

    /// How to reach Redis: `redis_url` (required) with the other keys, the
    /// password read from the variable `password_env` names.
    pub fn redis_options(&self) -> anyhow::Result<RedisOptions> {
        let url = self
            .redis_url
            .as_deref()
            .context("`[state] backend = \"redis\"` needs `redis_url`")?;
        let password = match &self.password_env {
            Some(var) => Some(std::env::var(var).with_context(|| {
                format!("`[state] password_env` names ${var}, which is not set")
            })?),
            None => None,
        };
        Ok(RedisOptions {
            username: self.username.clone(),
            password,
            tls_ca_file: self.tls_ca_file.clone(),
            connect_timeout: self.connect_timeout(),
            response_timeout: self.response_timeout(),
            pool_size: self.pool_size(),
            key_prefix: self.key_prefix().to_string(),
            ..RedisOptions::new(url)
        })
    }

    /// Open the Redis pool these settings describe, sealing records with
    /// the cluster key.
    pub fn open_redis(&self) -> anyhow::Result<Arc<RedisStore>> {
        RedisStore::open(&self.redis_options()?, &self.cluster_key()?)
    }

    /// The cluster key, read from the variable `cluster_key_env` names.
    pub fn cluster_key(&self) -> anyhow::Result<Vec<u8>> {
        let var = self
            .cluster_key_env
            .as_deref()
            .ok_or_else(|| anyhow::anyhow!("`[state]` names no `cluster_key_env`"))?;
        let key = std::env::var(var).map_err(|_| {
            anyhow::anyhow!("`[state] cluster_key_env` names ${var}, which is not set")
        })?;
        anyhow::ensure!(
            key.len() >= MIN_CLUSTER_KEY_BYTES,
            "the cluster key in ${var} has {} bytes; use at least {MIN_CLUSTER_KEY_BYTES} \
             (e.g. `openssl rand -hex 32`)",
            key.len()
        );
        Ok(key.into_bytes())
    }

    /// How long a shared session's write slot (or a parked call's claim)
    /// lasts without renewal.
    pub fn session_lease(&self) -> Duration {
        Duration::from_millis(self.session_lease_ms.unwrap_or(DEFAULT_SESSION_LEASE_MS))
    }

    /// The key prefix, `toolhost` unless set.
    pub fn key_prefix(&self) -> &str {
        self.key_prefix.as_deref().unwrap_or(DEFAULT_KEY_PREFIX)
    }

    /// Connections to open to Redis.
    pub fn pool_size(&self) -> usize {
        self.pool_size.unwrap_or(DEFAULT_POOL_SIZE)
    }

    /// How long connecting may take.
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout_ms
            .map_or(DEFAULT_CONNECT_TIMEOUT, Duration::from_millis)
    }

    /// How long one command may take.
    pub fn response_timeout(&self) -> Duration {
        self.response_timeout_ms
            .map_or(DEFAULT_RESPONSE_TIMEOUT, Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<StateSettings> {
        let settings: StateSettings = toml::from_str(text)?;
        settings.validate()?;
        Ok(settings)
    }

    #[test]
    fn embedded_is_the_default_and_refuses_redis_keys() {
        assert_eq!(parse("").unwrap().backend, Backend::Embedded);
        let err = parse("pool_size = 2").unwrap_err().to_string();
        assert!(err.contains("`pool_size` is a Redis setting"), "{err}");
    }

    #[test]
    fn redis_needs_a_redis_url() {
        let err = parse("backend = \"redis\"").unwrap_err().to_string();
        assert!(err.contains("needs `redis_url`"), "{err}");
        let err = parse("backend = \"redis\"\nredis_url = \"http://x\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("redis:// or rediss://"), "{err}");
        let err = parse("backend = \"redis\"\nredis_url = \"redis://127.0.0.1:6379/0\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs `workspaces_dir`"), "{err}");
        let err = parse(
            "backend = \"redis\"\nredis_url = \"redis://127.0.0.1:6379/0\"\nworkspaces_dir = \"/mnt/w\"",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("needs `cluster_key_env`"), "{err}");
        let ok = parse(
            "backend = \"redis\"\nredis_url = \"redis://127.0.0.1:6379/0\"\nworkspaces_dir = \"/mnt/w\"\ncluster_key_env = \"K\"",
        )
        .unwrap();
        assert_eq!(ok.key_prefix(), "toolhost");
        assert_eq!(ok.session_lease().as_millis(), 10_000);
        assert_eq!(ok.pool_size(), DEFAULT_POOL_SIZE);
    }

    #[test]
    fn bad_values_name_their_key() {
        let base = "backend = \"redis\"\nredis_url = \"redis://h\"\nworkspaces_dir = \"w\"\ncluster_key_env = \"K\"\n";
        for (line, key) in [
            ("pool_size = 0", "pool_size"),
            ("key_prefix = \"a:b\"", "key_prefix"),
            ("response_timeout_ms = 0", "response_timeout_ms"),
            ("session_lease_ms = 10", "session_lease_ms"),
            ("tls_ca_file = \"ca.pem\"", "tls_ca_file"),
            ("backend2 = 1", "backend2"),
        ] {
            let err = format!("{:#}", parse(&format!("{base}{line}")).unwrap_err());
            assert!(err.contains(key), "{line}: {err}");
        }
    }

    #[test]
    fn a_shared_compile_cache_needs_a_cluster_key_of_32_bytes() {
        let err = format!(
            "{:#}",
            parse("shared_compile_cache = \"/mnt/c\"").unwrap_err()
        );
        assert!(err.contains("needs `cluster_key_env`"), "{err}");
        let err = format!("{:#}", parse("cluster_key_env = \"K\"").unwrap_err());
        assert!(
            err.contains("is used with `backend = \"redis\"` or `shared_compile_cache`"),
            "{err}"
        );
        let settings = parse(
            "shared_compile_cache = \"/mnt/c\"\ncluster_key_env = \"TOOLHOST_TEST_KEY_UNSET_9\"",
        )
        .unwrap();
        let err = settings.shared_compile_cache().unwrap_err().to_string();
        assert!(
            err.contains("$TOOLHOST_TEST_KEY_UNSET_9, which is not set"),
            "{err}"
        );
        let shown = format!(
            "{:?}",
            SharedCompileCache {
                dir: "/mnt/c".into(),
                key: b"secret-secret-secret-secret-secret".as_slice().into(),
            }
        );
        assert!(!shown.contains("secret"), "{shown}");
    }

    #[test]
    fn passwords_in_urls_are_never_shown() {
        let settings = StateSettings {
            backend: Backend::Redis,
            redis_url: Some("redis://app:s3cret@h:6379".into()),
            ..StateSettings::default()
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("redis://app:***@h:6379"), "{shown}");
        let err = parse("backend = \"redis\"\nredis_url = \"http://u:s3cret@h\"")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("s3cret"), "{err}");
    }
}
