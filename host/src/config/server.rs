//! `[server]`: the HTTP server's settings (`toolhost serve`).

use anyhow::Context as _;
use serde::Deserialize;

use super::{MAX_SIZE_CAP, MAX_TIMEOUT_MS, check_range};
use crate::caps::http::AllowList;

/// The default wait for an approval: 10 minutes.
pub const DEFAULT_APPROVAL_TIMEOUT_MS: u64 = 600_000;
/// The default wait for a custom tool's result: 10 minutes.
pub const DEFAULT_CUSTOM_TOOL_TIMEOUT_MS: u64 = 600_000;
/// How long idle sessions and events are kept by default: 7 days.
pub const DEFAULT_SESSION_RETENTION_SECS: u64 = 7 * 24 * 3600;
/// The default cap on a request body: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// How long running calls may take to finish at shutdown by default.
pub const DEFAULT_SHUTDOWN_GRACE_SECS: u64 = 30;
/// The shortest bearer token accepted, from any source.
pub const MIN_TOKEN_CHARS: usize = 16;
/// The default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:3000";
/// Connections `serve` serves at once by default.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 1024;
/// The largest `max_connections`.
pub const MAX_CONNECTIONS: u32 = 65_536;
/// How long a client may take to send a request's headers by default.
pub const DEFAULT_HEADER_READ_TIMEOUT_MS: u64 = 10_000;
/// How long a client may pause while sending a body by default.
pub const DEFAULT_BODY_READ_TIMEOUT_MS: u64 = 30_000;
/// Calls one server lets wait at once by default (`max_waiting_calls`):
/// for an approval, a custom tool's result, or an MCP 2026-07-28 client's
/// next round; one more is refused at once instead of waiting.
pub const DEFAULT_MAX_WAITING_CALLS: usize = 1024;
/// How long a call of a tool that may be a task runs in its MCP request
/// before it becomes one, by default (`task_after_ms`).
pub const DEFAULT_TASK_AFTER_MS: u64 = 1000;
/// Tasks one server keeps at once by default (`max_tasks`), running and
/// finished.
pub const DEFAULT_MAX_TASKS: usize = 1024;
/// How long a task's record is kept by default (`task_ttl_ms`): an hour.
pub const DEFAULT_TASK_TTL_MS: u64 = 3_600_000;
/// The bytes of results finished tasks hold together by default
/// (`task_results_mb`), in MiB.
pub const DEFAULT_TASK_RESULTS_MB: usize = 256;
/// The largest `max_sessions` and `max_waiting_calls`.
pub const MAX_SERVER_COUNT: usize = 1_000_000;
/// The largest `session_history_mb` and `history_mb`.
pub const MAX_HISTORY_MB: usize = 65_536;

/// `[server]`: settings of `toolhost serve`; flags override them.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// The address to listen on.
    pub listen: Option<String>,
    /// The bearer token every route but `/healthz` requires.
    pub token: Option<String>,
    /// How long a call waits for an approval before it expires.
    pub approval_timeout_ms: Option<u64>,
    /// How long a custom tool call waits for the client's result.
    pub custom_tool_timeout_ms: Option<u64>,
    /// How long idle sessions (with their workspaces) and events are kept.
    pub session_retention_secs: Option<u64>,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: Option<usize>,
    /// Browser origins allowed to reach `/mcp` besides loopback ones
    /// (e.g. `"https://app.example.com"`).
    pub allowed_origins: Option<Vec<String>>,
    /// How long calls still running at SIGTERM may take to finish.
    pub shutdown_grace_secs: Option<u64>,
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: Option<u32>,
    /// How long a client may take to send a request's headers.
    pub header_read_timeout_ms: Option<u64>,
    /// How long a client may pause while sending a request's body.
    pub body_read_timeout_ms: Option<u64>,
    /// Sessions the server keeps at once.
    pub max_sessions: Option<usize>,
    /// Calls that may wait for an approval or a custom tool's result at once.
    pub max_waiting_calls: Option<usize>,
    /// How long a call of a tool that may be a task (`[tools.<name>] task`)
    /// runs in its MCP 2026-07-28 request before it becomes a task, when
    /// the client declared the Tasks extension.
    pub task_after_ms: Option<u64>,
    /// Tasks the server keeps at once, running and finished.
    pub max_tasks: Option<usize>,
    /// How long a task's record is kept after it starts: its `ttlMs`.
    pub task_ttl_ms: Option<u64>,
    /// The results and errors of finished tasks, together, in MiB.
    pub task_results_mb: Option<usize>,
    /// Event payloads one session's history keeps, in MiB.
    pub session_history_mb: Option<usize>,
    /// Event payloads every session's history keeps together, in MiB.
    pub history_mb: Option<usize>,
    /// Whether `toolhost serve` serves the web console at `/` (default
    /// true).
    pub console: Option<bool>,
    /// The origins (`scheme://host[:port]`, as a tool's `http` grant
    /// writes them) whose MCP servers an agent made over the API may
    /// name; none by default.
    pub agent_mcp_servers: Option<Vec<String>>,
}

/// The token is a secret: `Debug` shows only whether it is set.
impl std::fmt::Debug for ServerSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerSettings")
            .field("listen", &self.listen)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("approval_timeout_ms", &self.approval_timeout_ms)
            .field("custom_tool_timeout_ms", &self.custom_tool_timeout_ms)
            .field("session_retention_secs", &self.session_retention_secs)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("allowed_origins", &self.allowed_origins)
            .field("shutdown_grace_secs", &self.shutdown_grace_secs)
            .field("max_connections", &self.max_connections)
            .field("header_read_timeout_ms", &self.header_read_timeout_ms)
            .field("body_read_timeout_ms", &self.body_read_timeout_ms)
            .field("max_sessions", &self.max_sessions)
            .field("max_waiting_calls", &self.max_waiting_calls)
            .field("task_after_ms", &self.task_after_ms)
            .field("max_tasks", &self.max_tasks)
            .field("task_ttl_ms", &self.task_ttl_ms)
            .field("task_results_mb", &self.task_results_mb)
            .field("session_history_mb", &self.session_history_mb)
            .field("history_mb", &self.history_mb)
            .field("console", &self.console)
            .field("agent_mcp_servers", &self.agent_mcp_servers)
            .finish()
    }
}

impl ServerSettings {
    /// How long a call that may be a task runs in its request first.
    pub fn task_after(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.task_after_ms.unwrap_or(DEFAULT_TASK_AFTER_MS))
    }

    /// How many tasks a server keeps at once.
    pub fn max_tasks(&self) -> usize {
        self.max_tasks.unwrap_or(DEFAULT_MAX_TASKS)
    }

    /// How long a task's record is kept.
    pub fn task_ttl(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.task_ttl_ms.unwrap_or(DEFAULT_TASK_TTL_MS))
    }

    /// How many bytes of results finished tasks hold together.
    pub fn task_result_bytes(&self) -> usize {
        self.task_results_mb
            .unwrap_or(DEFAULT_TASK_RESULTS_MB)
            .saturating_mul(1024 * 1024)
    }

    /// Where agents made over the API may reach MCP servers.
    pub fn agent_mcp_servers(&self) -> AllowList {
        AllowList::parse(self.agent_mcp_servers.as_deref().unwrap_or_default()).unwrap_or_default()
    }

    pub(super) fn validate(&self) -> anyhow::Result<()> {
        if let Some(entries) = &self.agent_mcp_servers {
            AllowList::parse(entries).context("invalid `agent_mcp_servers` entry")?;
        }
        for (key, value) in [
            ("approval_timeout_ms", self.approval_timeout_ms),
            ("custom_tool_timeout_ms", self.custom_tool_timeout_ms),
        ] {
            if let Some(ms) = value {
                anyhow::ensure!(
                    (1..=86_400_000).contains(&ms),
                    "`{key}` = {ms} is out of range: expected 1 to 86400000 (a day)"
                );
            }
        }
        if let Some(secs) = self.shutdown_grace_secs {
            anyhow::ensure!(
                secs <= 3600,
                "`shutdown_grace_secs` = {secs} is out of range: expected 0 to 3600 (an hour)"
            );
        }
        check_range("max_connections", self.max_connections, 1..=MAX_CONNECTIONS)?;
        check_range(
            "header_read_timeout_ms",
            self.header_read_timeout_ms,
            100..=MAX_TIMEOUT_MS,
        )?;
        check_range(
            "body_read_timeout_ms",
            self.body_read_timeout_ms,
            100..=MAX_TIMEOUT_MS,
        )?;
        check_range("max_sessions", self.max_sessions, 1..=MAX_SERVER_COUNT)?;
        check_range(
            "max_waiting_calls",
            self.max_waiting_calls,
            1..=MAX_SERVER_COUNT,
        )?;
        check_range("task_after_ms", self.task_after_ms, 0..=MAX_TIMEOUT_MS)?;
        check_range("max_tasks", self.max_tasks, 1..=MAX_SERVER_COUNT)?;
        check_range("task_ttl_ms", self.task_ttl_ms, 1000..=86_400_000)?;
        check_range("task_results_mb", self.task_results_mb, 1..=MAX_HISTORY_MB)?;
        check_range(
            "session_history_mb",
            self.session_history_mb,
            1..=MAX_HISTORY_MB,
        )?;
        check_range("history_mb", self.history_mb, 1..=MAX_HISTORY_MB)?;
        check_range("max_body_bytes", self.max_body_bytes, 1024..=MAX_SIZE_CAP)?;
        if let Some(listen) = &self.listen {
            listen.parse::<std::net::SocketAddr>().map_err(|_| {
                anyhow::anyhow!(
                    "`listen` = {listen:?} is not an address such as \"127.0.0.1:3000\""
                )
            })?;
        }
        for origin in self.allowed_origins.iter().flatten() {
            anyhow::ensure!(
                origin.starts_with("http://") || origin.starts_with("https://"),
                "`allowed_origins` entry {origin:?} needs a scheme, e.g. \"https://app.example.com\""
            );
        }
        if let Some(token) = &self.token {
            anyhow::ensure!(
                token.len() >= MIN_TOKEN_CHARS,
                "`token` is too short: use at least {MIN_TOKEN_CHARS} characters"
            );
        }
        Ok(())
    }
}
