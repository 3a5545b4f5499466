//! How `toolhost serve` runs: flags over `[server]` over the defaults.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context as _;
use toolhost::config::{
    DEFAULT_APPROVAL_TIMEOUT_MS, DEFAULT_BODY_READ_TIMEOUT_MS, DEFAULT_CUSTOM_TOOL_TIMEOUT_MS,
    DEFAULT_HEADER_READ_TIMEOUT_MS, DEFAULT_LISTEN, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_SESSION_RETENTION_SECS, DEFAULT_SHUTDOWN_GRACE_SECS,
};
use toolhost::host::Host;
use toolhost::session::{
    HistoryBudget, MAX_HISTORY_BYTES, MAX_SESSION_HISTORY_BYTES, MAX_SESSIONS, SessionStore,
};

use super::MAX_WAITING_CALLS;

/// How `toolhost serve` runs; flags over `[server]` over the defaults.
#[derive(Clone)]
pub struct ServeOptions {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The bearer token, if any.
    pub token: Option<String>,
    /// How long a call waits for an approval.
    pub approval_timeout: Duration,
    /// How long a custom tool call waits for its result.
    pub custom_tool_timeout: Duration,
    /// How long idle sessions and events are kept.
    pub session_retention: Duration,
    /// The largest request body.
    pub max_body_bytes: usize,
    /// How long calls running at shutdown may take to finish.
    pub shutdown_grace: Duration,
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers (and, on a
    /// kept-alive connection, to start the next request).
    pub header_read_timeout: Duration,
    /// How long a client may pause while sending a request's body.
    pub body_read_timeout: Duration,
    /// Sessions kept at once.
    pub max_sessions: usize,
    /// Calls that may wait for an approval or a custom tool's result at once.
    pub max_waiting_calls: usize,
    /// Event payload bytes one session's history keeps.
    pub session_history_bytes: usize,
    /// Event payload bytes every session's history keeps together.
    pub history_bytes: usize,
    /// Whether the web console is served at `/`.
    pub console: bool,
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("listen", &self.listen)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("approval_timeout", &self.approval_timeout)
            .field("custom_tool_timeout", &self.custom_tool_timeout)
            .field("session_retention", &self.session_retention)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("max_connections", &self.max_connections)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("max_sessions", &self.max_sessions)
            .field("max_waiting_calls", &self.max_waiting_calls)
            .field("session_history_bytes", &self.session_history_bytes)
            .field("history_bytes", &self.history_bytes)
            .finish()
    }
}

impl ServeOptions {
    /// The options `[server]` in the host's config gives.
    pub fn from_config(host: &Host) -> anyhow::Result<Self> {
        let config = host.config();
        let server = &config.server;
        let listen = server.listen.as_deref().unwrap_or(DEFAULT_LISTEN);
        Ok(Self {
            listen: listen
                .parse()
                .with_context(|| format!("invalid listen address {listen:?}"))?,
            token: server.token.clone(),
            approval_timeout: Duration::from_millis(
                server
                    .approval_timeout_ms
                    .unwrap_or(DEFAULT_APPROVAL_TIMEOUT_MS),
            ),
            custom_tool_timeout: Duration::from_millis(
                server
                    .custom_tool_timeout_ms
                    .unwrap_or(DEFAULT_CUSTOM_TOOL_TIMEOUT_MS),
            ),
            session_retention: Duration::from_secs(
                server
                    .session_retention_secs
                    .unwrap_or(DEFAULT_SESSION_RETENTION_SECS),
            ),
            max_body_bytes: server.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES),
            shutdown_grace: Duration::from_secs(
                server
                    .shutdown_grace_secs
                    .unwrap_or(DEFAULT_SHUTDOWN_GRACE_SECS),
            ),
            max_connections: server.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS) as usize,
            header_read_timeout: Duration::from_millis(
                server
                    .header_read_timeout_ms
                    .unwrap_or(DEFAULT_HEADER_READ_TIMEOUT_MS),
            ),
            body_read_timeout: Duration::from_millis(
                server
                    .body_read_timeout_ms
                    .unwrap_or(DEFAULT_BODY_READ_TIMEOUT_MS),
            ),
            max_sessions: server.max_sessions.unwrap_or(MAX_SESSIONS),
            max_waiting_calls: server.max_waiting_calls.unwrap_or(MAX_WAITING_CALLS),
            session_history_bytes: server
                .session_history_mb
                .map_or(MAX_SESSION_HISTORY_BYTES, |mb| mb << 20),
            history_bytes: server.history_mb.map_or(MAX_HISTORY_BYTES, |mb| mb << 20),
            console: server.console.unwrap_or(true),
        })
    }

    /// The session store these options describe, where `host` keeps its
    /// sessions (shared with its fleet on the Redis backend).
    pub fn session_store(&self, host: &Host) -> anyhow::Result<SessionStore> {
        let history = HistoryBudget::new(self.session_history_bytes, self.history_bytes);
        Ok(host
            .open_sessions(self.session_retention, history)?
            .with_max_sessions(self.max_sessions))
    }
}
