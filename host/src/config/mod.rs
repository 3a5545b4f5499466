//! `toolhost.toml`: the operator's settings and grants, parsed strictly.
//!
//! Every table rejects unknown keys, naming the key and its line. What a
//! tool gets is its `[tools.<name>]` entry over `[defaults]` over the built-in
//! defaults, which deny every capability.

pub mod agent;
pub mod agent_tools;
mod grants;
pub mod mcp;
pub mod redacted;
pub mod state;
pub mod toolset;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use self::agent::AgentSpec;
pub use self::grants::{Channels, Principals, RemindersGrant};
use self::mcp::McpServer;
use self::toolset::{Toolset, Toolsets};
use crate::caps::http::AllowList;
use crate::usage::HostBudget;
pub use crate::usage::{DEFAULT_HOST_MEMORY_MB, DEFAULT_MAX_HANDLES};

/// The file name looked for in a host directory.
pub const CONFIG_FILE: &str = "toolhost.toml";
/// A call's deadline when none is configured.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// A call's memory cap when none is configured: sized for the Python and JS examples.
pub const DEFAULT_MEMORY_MB: u64 = 128;
/// The largest memory cap a tool may be given.
pub const MAX_MEMORY_MB: u64 = 4096;
/// The longest deadline a tool may be given.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// The whole `toolhost.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The agent's slug, used in HTTP routes.
    #[serde(default)]
    pub name: Option<String>,
    /// Settings for every tool, unless a tool's own entry overrides them.
    #[serde(default)]
    pub defaults: ToolSettings,
    /// Per-tool settings, by tool name.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolSettings>,
    /// Custom tools, by name: declared here, run by the client that calls them.
    #[serde(default)]
    pub custom_tools: BTreeMap<String, CustomToolSpec>,
    /// Settings of the HTTP server (`toolhost serve`).
    #[serde(default)]
    pub server: ServerSettings,
    /// Host-wide limits on calls, for every surface.
    #[serde(default)]
    pub limits: HostLimits,
    /// The built-in toolset and the MCP toolsets, when declared
    /// (`[toolset]` or `[[toolset]]`).
    #[serde(default, deserialize_with = "crate::config::toolset::one_or_many")]
    pub toolset: Toolsets,
    /// The MCP servers whose tools the MCP toolsets mount.
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
    /// Where call spans and metrics are exported over OTLP, if anywhere.
    #[serde(default)]
    pub telemetry: TelemetrySettings,
    /// Agent-execution tools, by name: scripts the agent harness runs.
    #[serde(default)]
    pub agent_tools: BTreeMap<String, agent_tools::AgentToolSpec>,
    /// Named agents beside the default one (`[agents.<name>]`).
    #[serde(default)]
    pub agents: BTreeMap<String, AgentSpec>,
    /// Where shared state lives: embedded files, or Redis for several
    /// servers (`[state]`). Read when the host starts.
    #[serde(default)]
    pub state: state::StateSettings,
}

/// `[telemetry]`: OpenTelemetry export of call spans and metrics over
/// OTLP/HTTP (protobuf), by the servers (`serve`, `mcp`).
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySettings {
    /// The collector's base URL, e.g. `http://127.0.0.1:4318`: spans go to
    /// `<it>/v1/traces`, metrics to `<it>/v1/metrics`. Unset: no export.
    pub otlp_endpoint: Option<String>,
    /// Headers sent with every export (e.g. an API key).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// How often metrics are exported, in milliseconds (default 60 000).
    pub export_interval_ms: Option<u64>,
    /// The `service.name` resource (default `toolhost`).
    pub service_name: Option<String>,
}

/// Header values may be secrets: `Debug` shows only their names.
impl std::fmt::Debug for TelemetrySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetrySettings")
            .field("otlp_endpoint", &self.otlp_endpoint)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("export_interval_ms", &self.export_interval_ms)
            .field("service_name", &self.service_name)
            .finish()
    }
}

/// The default metrics export interval, in milliseconds.
pub const DEFAULT_EXPORT_INTERVAL_MS: u64 = 60_000;

impl TelemetrySettings {
    /// How often metrics are exported.
    pub fn export_interval(&self) -> Duration {
        Duration::from_millis(
            self.export_interval_ms
                .unwrap_or(DEFAULT_EXPORT_INTERVAL_MS),
        )
    }

    fn validate(&self) -> anyhow::Result<()> {
        check_range(
            "export_interval_ms",
            self.export_interval_ms,
            100..=3_600_000,
        )?;
        if let Some(endpoint) = &self.otlp_endpoint {
            let ok = (endpoint.starts_with("http://") || endpoint.starts_with("https://"))
                && endpoint.parse::<http::Uri>().is_ok();
            anyhow::ensure!(
                ok,
                "[telemetry] otlp_endpoint {endpoint:?} is not an http:// or https:// URL"
            );
        }
        for name in self.headers.keys() {
            anyhow::ensure!(
                http::HeaderName::from_bytes(name.as_bytes()).is_ok(),
                "[telemetry] headers: {name:?} is not a header name"
            );
        }
        Ok(())
    }
}

/// A custom tool: a name, a description and an input schema, but no
/// component. A call hands the input to the session's client, which runs it
/// and posts the result back.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomToolSpec {
    /// Written for the model, as for any tool.
    pub description: String,
    /// A JSON Schema with `type = "object"`.
    pub input_schema: serde_json::Value,
    /// What its calls do; `write` when unset.
    #[serde(default)]
    pub effect: Option<crate::tool::Effect>,
}

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
            .field("session_history_mb", &self.session_history_mb)
            .field("history_mb", &self.history_mb)
            .field("console", &self.console)
            .field("agent_mcp_servers", &self.agent_mcp_servers)
            .finish()
    }
}

impl ServerSettings {
    /// Where agents made over the API may reach MCP servers.
    pub fn agent_mcp_servers(&self) -> AllowList {
        AllowList::parse(self.agent_mcp_servers.as_deref().unwrap_or_default()).unwrap_or_default()
    }

    fn validate(&self) -> anyhow::Result<()> {
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

/// Refuse `value`, the setting `key`, outside `range`, naming all three.
fn check_range<T>(key: &str, value: Option<T>, range: RangeInclusive<T>) -> anyhow::Result<()>
where
    T: PartialOrd + std::fmt::Display,
{
    if let Some(value) = value {
        anyhow::ensure!(
            range.contains(&value),
            "`{key}` = {value} is out of range: expected {} to {}",
            range.start(),
            range.end()
        );
    }
    Ok(())
}

/// How many calls may run tool code at once by default.
pub const DEFAULT_MAX_CONCURRENT_CALLS: u32 = 64;
/// How many calls may wait for a slot by default; more are refused at once.
pub const DEFAULT_MAX_QUEUED_CALLS: u32 = 256;
/// The compile cache's size cap, in MiB, when none is configured: room for
/// the examples (a Python tool compiles to ~36 MB) many times over.
pub const DEFAULT_COMPILE_CACHE_MB: u64 = 2048;
/// The largest compile cache cap.
pub const MAX_COMPILE_CACHE_MB: u64 = 1 << 20;
/// How long a call waits for a slot by default before it is refused.
pub const DEFAULT_QUEUE_TIMEOUT_MS: u64 = 10_000;
/// The most calls the host may be configured to run at once.
pub const MAX_CONCURRENT_CALLS_CAP: u32 = 4096;
/// The largest `host_memory_mb`.
pub const MAX_HOST_MEMORY_MB: u64 = 4096;
/// The smallest `max_handles`: a toolchain's start-up opens a few dozen.
pub const MIN_MAX_HANDLES: u32 = 64;
/// The largest `max_handles`.
pub const MAX_MAX_HANDLES: u32 = 1_000_000;
/// How many workspace files every call together may hold open by default.
pub const DEFAULT_MAX_OPEN_FILES: u32 = 4096;
/// The fewest `max_open_files`: a toolchain's start-up opens a few.
pub const MIN_MAX_OPEN_FILES: u32 = 16;
/// How long a call waits for an answer to a question by default (10 min).
pub const DEFAULT_ASK_TIMEOUT_MS: u64 = 600_000;
/// The bytes one session's artifacts may take by default, in MiB.
pub const DEFAULT_SESSION_ARTIFACTS_MB: u64 = 256;
/// The most `session_artifacts_mb` may be (1 TiB).
const MAX_SESSION_ARTIFACTS_MB: u64 = 1 << 20;
/// The longest `ask_timeout_ms` (a day).
pub const MAX_ASK_TIMEOUT_MS: u64 = 86_400_000;
/// The smallest per-handle share of the host memory budget.
pub const MIN_BYTES_PER_HANDLE: usize = 4096;

/// `[limits]`: how many calls run at once and how many may wait, on every
/// surface together (HTTP, MCP, CLI, library).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostLimits {
    /// Calls running tool code at once; the instance pool is sized for them.
    pub max_concurrent_calls: Option<u32>,
    /// Calls allowed to wait for a slot; one more is refused as overloaded.
    pub max_queued_calls: Option<u32>,
    /// How long a call waits for a slot before it is refused as overloaded.
    pub queue_timeout_ms: Option<u64>,
    /// The compile cache's size on disk, in MiB: past it, the least
    /// recently used compilations are removed.
    pub compile_cache_mb: Option<u64>,
    /// Host memory one call may make the host hold for it, in MiB.
    pub host_memory_mb: Option<u64>,
    /// Resource handles one call may hold at once.
    pub max_handles: Option<u32>,
    /// Workspace files every call together may hold open; held to half the
    /// process's open-file limit.
    pub max_open_files: Option<u32>,
    /// Calls that may wait for an answer from a person or a model at once
    /// (`toolhost:tool/ask`); fewer than `max_concurrent_calls`, so those
    /// who take their time cannot hold every slot.
    pub max_asking_calls: Option<u32>,
    /// How long one question waits for its answer, in milliseconds.
    pub ask_timeout_ms: Option<u64>,
    /// The bytes one session's artifacts may take together, in MiB.
    pub session_artifacts_mb: Option<u64>,
}

impl HostLimits {
    /// Calls running tool code at once.
    pub fn concurrent_calls(&self) -> u32 {
        self.max_concurrent_calls
            .unwrap_or(DEFAULT_MAX_CONCURRENT_CALLS)
    }

    /// Calls allowed to wait for a slot.
    pub fn queued_calls(&self) -> u32 {
        self.max_queued_calls.unwrap_or(DEFAULT_MAX_QUEUED_CALLS)
    }

    /// How long a call waits for a slot.
    pub fn queue_timeout(&self) -> Duration {
        Duration::from_millis(self.queue_timeout_ms.unwrap_or(DEFAULT_QUEUE_TIMEOUT_MS))
    }

    /// The compile cache's size cap, in bytes.
    pub fn compile_cache_bytes(&self) -> u64 {
        self.compile_cache_mb.unwrap_or(DEFAULT_COMPILE_CACHE_MB) << 20
    }

    /// What one call may make the host hold for it.
    pub fn host_budget(&self) -> HostBudget {
        HostBudget {
            bytes: usize::try_from(self.host_memory_mb.unwrap_or(DEFAULT_HOST_MEMORY_MB) << 20)
                .unwrap_or(usize::MAX),
            handles: self.max_handles.unwrap_or(DEFAULT_MAX_HANDLES),
        }
    }

    /// Workspace files every call together may hold open, as configured.
    pub fn open_files(&self) -> u32 {
        self.max_open_files.unwrap_or(DEFAULT_MAX_OPEN_FILES)
    }

    /// Calls that may wait for an answer at once: half the running calls
    /// unless set.
    pub fn asking_calls(&self) -> u32 {
        self.max_asking_calls.unwrap_or(self.concurrent_calls() / 2)
    }

    /// How long one question waits for its answer.
    pub fn ask_timeout(&self) -> Duration {
        Duration::from_millis(self.ask_timeout_ms.unwrap_or(DEFAULT_ASK_TIMEOUT_MS))
    }

    /// The bytes one session's artifacts may take together.
    pub fn session_artifact_bytes(&self) -> u64 {
        self.session_artifacts_mb
            .unwrap_or(DEFAULT_SESSION_ARTIFACTS_MB)
            << 20
    }

    fn validate(&self) -> anyhow::Result<()> {
        check_range(
            "session_artifacts_mb",
            self.session_artifacts_mb,
            1..=MAX_SESSION_ARTIFACTS_MB,
        )?;
        check_range(
            "max_open_files",
            self.max_open_files,
            MIN_MAX_OPEN_FILES..=MAX_MAX_HANDLES,
        )?;
        check_range(
            "host_memory_mb",
            self.host_memory_mb,
            1..=MAX_HOST_MEMORY_MB,
        )?;
        check_range(
            "max_handles",
            self.max_handles,
            MIN_MAX_HANDLES..=MAX_MAX_HANDLES,
        )?;
        let share = self.host_budget().per_handle_bytes();
        anyhow::ensure!(
            share >= MIN_BYTES_PER_HANDLE,
            "`host_memory_mb` / `max_handles` leaves {share} bytes per handle; at least \
             {MIN_BYTES_PER_HANDLE} are needed for a header map or a body buffer: raise \
             `host_memory_mb` or lower `max_handles`"
        );
        if let Some(mb) = self.compile_cache_mb {
            anyhow::ensure!(
                (1..=MAX_COMPILE_CACHE_MB).contains(&mb),
                "`compile_cache_mb` = {mb} is out of range: expected 1 to {MAX_COMPILE_CACHE_MB} \
                 (1 TiB)"
            );
        }
        check_range(
            "max_concurrent_calls",
            self.max_concurrent_calls,
            1..=MAX_CONCURRENT_CALLS_CAP,
        )?;
        check_range("max_queued_calls", self.max_queued_calls, 0..=65_536)?;
        check_range(
            "max_asking_calls",
            self.max_asking_calls,
            0..=self.concurrent_calls().saturating_sub(1),
        )
        .context("calls waiting for an answer hold their slot: leave at least one for others")?;
        check_range(
            "ask_timeout_ms",
            self.ask_timeout_ms,
            1..=MAX_ASK_TIMEOUT_MS,
        )?;
        check_range(
            "queue_timeout_ms",
            self.queue_timeout_ms,
            0..=MAX_TIMEOUT_MS,
        )?;
        Ok(())
    }
}

/// Settings that `[defaults]` and `[tools.<name>]` may hold; unset keys inherit.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSettings {
    /// Whether the tool is listed and callable.
    pub enabled: Option<bool>,
    /// Whether calls need approval.
    pub permission: Option<Permission>,
    /// The call's deadline, all attempts together, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// The call's linear-memory cap, in MiB.
    pub memory_mb: Option<u64>,
    /// Access to the session's workspace directory.
    pub workspace: Option<DirAccess>,
    /// Access to the host's durable state directory, shared by every
    /// session (`/state`).
    pub state: Option<DirAccess>,
    /// Access to the session's artifacts: `read` lists, `write` also saves.
    pub artifacts: Option<DirAccess>,
    /// Whether the tool may update custom metrics.
    pub metrics: Option<bool>,
    /// The channels whose sessions the tool may look up and send messages
    /// to: names, or prefixes ending in `*`.
    pub sessions: Option<Vec<String>>,
    /// The principals the tool may send session messages as, besides its
    /// call's own: ids, or prefixes ending in `*`.
    pub send_as: Option<Vec<String>>,
    /// Whether the tool may schedule reminders, and which tools they may call.
    pub reminders: Option<RemindersGrant>,
    /// Key-value buckets the tool may open.
    pub kv: Option<Vec<String>>,
    /// Origins the tool may send HTTP requests to.
    pub http: Option<Vec<String>>,
    /// Environment variables given to the tool.
    pub env: Option<BTreeMap<String, String>>,
    /// Whom the tool may ask during a call (`toolhost:tool/ask`).
    pub ask: Option<BTreeSet<Asked>>,
    /// The largest input accepted, in bytes of JSON.
    pub max_input_bytes: Option<usize>,
    /// The largest result the tool may return, in bytes.
    pub max_output_bytes: Option<usize>,
    /// How much of each of stdout and stderr is kept, in bytes.
    pub max_stdio_bytes: Option<usize>,
    /// How many HTTP requests one call may attempt, all attempts together.
    pub max_http_requests: Option<u32>,
    /// The largest HTTP response body the tool may read, in bytes.
    pub max_http_response_bytes: Option<u64>,
    /// For a function of a plain component: its description (components
    /// rarely keep their WIT doc comments).
    pub description: Option<String>,
    /// For a function of a plain component: what its calls do (`write`
    /// when unset).
    pub effect: Option<crate::tool::Effect>,
}

/// Environment values may be secrets: `Debug` shows only their names.
impl std::fmt::Debug for ToolSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSettings")
            .field("enabled", &self.enabled)
            .field("permission", &self.permission)
            .field("timeout_ms", &self.timeout_ms)
            .field("memory_mb", &self.memory_mb)
            .field("workspace", &self.workspace)
            .field("state", &self.state)
            .field("artifacts", &self.artifacts)
            .field("metrics", &self.metrics)
            .field("sessions", &self.sessions)
            .field("send_as", &self.send_as)
            .field("reminders", &self.reminders)
            .field("kv", &self.kv)
            .field("http", &self.http)
            .field(
                "env",
                &self.env.as_ref().map(|e| e.keys().collect::<Vec<_>>()),
            )
            .finish_non_exhaustive()
    }
}

/// Whether a tool's calls run at once or wait for someone to approve them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    /// Calls run without asking.
    #[default]
    AlwaysAllow,
    /// Every call waits for an approval.
    AlwaysAsk,
}

/// How much of a directory (the session's workspace, the host's state
/// root) a tool may touch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DirAccess {
    /// No workspace at all.
    #[default]
    None,
    /// Read-only.
    Read,
    /// Read and write.
    Write,
}

/// Whom a tool may ask during a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Asked {
    /// The person using the client (MCP elicitation).
    User,
    /// The client's model (MCP sampling).
    Model,
}

impl std::fmt::Display for Asked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::User => "user",
            Self::Model => "model",
        })
    }
}

/// What one tool is allowed, resolved from the config.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolPolicy {
    /// Whether the tool is listed and callable.
    pub enabled: bool,
    /// Whether calls need approval.
    pub permission: Permission,
    /// The call's deadline, all attempts together.
    pub timeout: Duration,
    /// The call's linear-memory cap in bytes.
    pub memory_bytes: usize,
    /// The capabilities granted.
    pub grants: Grants,
    /// Size caps on what goes in and out of a call.
    pub limits: ToolLimits,
    /// The description given in `[tools.<name>]` (plain components only).
    pub description: Option<String>,
    /// The effect given in `[tools.<name>]` (plain components only).
    pub effect: Option<crate::tool::Effect>,
}

/// Size caps on one call, resolved from the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimits {
    /// The largest input, in bytes of JSON.
    pub input_bytes: usize,
    /// The largest result, in bytes.
    pub output_bytes: usize,
    /// Bytes kept of each of stdout and stderr.
    pub stdio_bytes: usize,
    /// HTTP requests per call; the host's network limit when unset.
    pub http_requests: Option<u32>,
    /// The largest HTTP response body, in bytes; the host's network limit when unset.
    pub http_response_bytes: Option<u64>,
    /// Host memory and handles the call may hold (`[limits]`).
    pub host: HostBudget,
}

/// The default input cap: 1 MiB.
pub const DEFAULT_MAX_INPUT_BYTES: usize = 1024 * 1024;
/// The default output cap: 1 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// The default stdout/stderr capture: 64 KiB each.
pub const DEFAULT_MAX_STDIO_BYTES: usize = 64 * 1024;
/// The largest value any byte-size cap may be set to: 64 MiB.
pub const MAX_SIZE_CAP: usize = 64 * 1024 * 1024;

/// The capabilities granted to one tool. Empty denies everything.
#[derive(Clone, Default, PartialEq)]
pub struct Grants {
    /// Workspace access.
    pub workspace: DirAccess,
    /// Access to the host's state root.
    pub state: DirAccess,
    /// Access to the session's artifacts.
    pub artifacts: DirAccess,
    /// Whether it may update custom metrics.
    pub metrics: bool,
    /// The channels whose sessions it may look up and send to.
    pub sessions: Channels,
    /// The principals it may send as, besides its call's own.
    pub send_as: Principals,
    /// Whether it may schedule reminders, and which tools they may call.
    pub reminders: Option<RemindersGrant>,
    /// Buckets the tool may open.
    pub kv: Vec<String>,
    /// Where the tool may send HTTP requests (shared with every call's HTTP context).
    pub http: Arc<AllowList>,
    /// Environment variables, by name.
    pub env: BTreeMap<String, String>,
    /// Whom it may ask during a call.
    pub ask: BTreeSet<Asked>,
}

/// Environment values may be secrets: `Debug` shows only their names.
impl std::fmt::Debug for Grants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grants")
            .field("workspace", &self.workspace)
            .field("state", &self.state)
            .field("artifacts", &self.artifacts)
            .field("metrics", &self.metrics)
            .field("sessions", &self.sessions)
            .field("send_as", &self.send_as)
            .field("reminders", &self.reminders)
            .field("kv", &self.kv)
            .field("http", &self.http)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("ask", &self.ask)
            .finish()
    }
}

impl Config {
    /// Parse `toolhost.toml` text; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &Path) -> anyhow::Result<Self> {
        let mut config: Self =
            toml::from_str(text).with_context(|| format!("invalid {}", origin.display()))?;
        let dir = origin.parent().unwrap_or(Path::new("."));
        for (name, tool) in &mut config.agent_tools {
            tool.resolve(name, dir)
                .with_context(|| format!("invalid {}", origin.display()))?;
        }
        for (name, agent) in &mut config.agents {
            agent
                .read_files(name, dir)
                .with_context(|| format!("invalid {}", origin.display()))?;
        }
        config
            .validate()
            .with_context(|| format!("invalid {}", origin.display()))?;
        Ok(config)
    }

    /// Read `<dir>/toolhost.toml`, or the defaults when there is none.
    pub fn load(dir: &Path) -> anyhow::Result<Self> {
        Self::load_with_text(dir).map(|(config, _)| config)
    }

    /// [`Config::load`], with the file's text (`None` when there is none).
    pub fn load_with_text(dir: &Path) -> anyhow::Result<(Self, Option<String>)> {
        let path = dir.join(CONFIG_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok((Self::parse(&text, &path)?, Some(text))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Self::default(), None)),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// The file a host directory's config lives in.
    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(CONFIG_FILE)
    }

    /// The resolved policy of the tool `name`: its `[tools.<name>]` entry
    /// over what the toolset gives a toolset tool over `[defaults]`.
    pub fn policy_for(&self, name: &str) -> anyhow::Result<ToolPolicy> {
        let implied = self.declared_toolset().and_then(|t| t.settings_for(name));
        self.policy_over(name, implied.as_ref())
    }

    /// The resolved policy of the tool `name`: its `[tools.<name>]` entry
    /// over `implied` (what its toolset gives it) over `[defaults]`.
    pub(crate) fn policy_over(
        &self,
        name: &str,
        implied: Option<&ToolSettings>,
    ) -> anyhow::Result<ToolPolicy> {
        let layers: Vec<&ToolSettings> = self
            .tools
            .get(name)
            .into_iter()
            .chain(implied)
            .chain([&self.defaults])
            .collect();
        let http = AllowList::parse(&first(&layers, |s| s.http.clone()).unwrap_or_default())
            .with_context(|| format!("invalid `http` grant for tool `{name}`"))?;
        let sessions = Channels::parse(&first(&layers, |s| s.sessions.clone()).unwrap_or_default())
            .with_context(|| format!("invalid `sessions` grant for tool `{name}`"))?;
        let send_as = Principals::parse(&first(&layers, |s| s.send_as.clone()).unwrap_or_default())
            .with_context(|| format!("invalid `send_as` grant for tool `{name}`"))?;
        Ok(ToolPolicy {
            enabled: first(&layers, |s| s.enabled).unwrap_or(true),
            permission: first(&layers, |s| s.permission).unwrap_or_default(),
            timeout: Duration::from_millis(
                first(&layers, |s| s.timeout_ms).unwrap_or(DEFAULT_TIMEOUT_MS),
            ),
            memory_bytes: usize::try_from(
                first(&layers, |s| s.memory_mb).unwrap_or(DEFAULT_MEMORY_MB),
            )
            .unwrap_or(usize::MAX)
            .saturating_mul(1024 * 1024),
            grants: Grants {
                workspace: first(&layers, |s| s.workspace).unwrap_or_default(),
                state: first(&layers, |s| s.state).unwrap_or_default(),
                artifacts: first(&layers, |s| s.artifacts).unwrap_or_default(),
                metrics: first(&layers, |s| s.metrics).unwrap_or_default(),
                sessions,
                send_as,
                reminders: first(&layers, |s| s.reminders.clone()),
                kv: first(&layers, |s| s.kv.clone()).unwrap_or_default(),
                http: Arc::new(http),
                env: first(&layers, |s| s.env.clone()).unwrap_or_default(),
                ask: first(&layers, |s| s.ask.clone()).unwrap_or_default(),
            },
            limits: ToolLimits {
                input_bytes: first(&layers, |s| s.max_input_bytes)
                    .unwrap_or(DEFAULT_MAX_INPUT_BYTES),
                output_bytes: first(&layers, |s| s.max_output_bytes)
                    .unwrap_or(DEFAULT_MAX_OUTPUT_BYTES),
                stdio_bytes: first(&layers, |s| s.max_stdio_bytes)
                    .unwrap_or(DEFAULT_MAX_STDIO_BYTES),
                http_requests: first(&layers, |s| s.max_http_requests),
                http_response_bytes: first(&layers, |s| s.max_http_response_bytes),
                host: self.limits.host_budget(),
            },
            description: self.tools.get(name).and_then(|s| s.description.clone()),
            effect: self.tools.get(name).and_then(|s| s.effect),
        })
    }

    /// The built-in toolset, if the config declares it.
    pub fn declared_toolset(&self) -> Option<&Toolset> {
        self.toolset.agent.as_ref()
    }

    /// The declared MCP server `name`.
    pub fn mcp_server(&self, name: &str) -> Option<&McpServer> {
        self.mcp_servers.iter().find(|s| s.name == name)
    }

    /// The largest memory cap any tool may get, for sizing the instance pool.
    pub fn max_memory_bytes(&self) -> usize {
        let mb = std::iter::once(&self.defaults)
            .chain(self.tools.values())
            .filter_map(|s| s.memory_mb)
            .chain([DEFAULT_MEMORY_MB])
            .max()
            .unwrap_or(DEFAULT_MEMORY_MB);
        usize::try_from(mb).unwrap_or(usize::MAX) * 1024 * 1024
    }

    /// Check every value; [`Config::parse`] does, and so does a host built
    /// from a config made in code.
    pub fn validate(&self) -> anyhow::Result<()> {
        if let Some(name) = &self.name {
            anyhow::ensure!(
                is_slug(name),
                "`name` = {name:?} is not a slug: use 1-64 characters of a-z, 0-9, `-` and `_`"
            );
        }
        self.server.validate().context("in [server]")?;
        self.telemetry.validate()?;
        self.state.validate().context("in [state]")?;
        self.limits.validate().context("in [limits]")?;
        anyhow::ensure!(
            self.defaults.description.is_none() && self.defaults.effect.is_none(),
            "in [defaults]: `description` and `effect` describe one function of a plain \
             component; set them in its [tools.<name>] entry"
        );
        let sections = std::iter::once(("[defaults]".to_string(), &self.defaults))
            .chain(self.tools.iter().map(|(n, s)| (format!("[tools.{n}]"), s)));
        for (section, settings) in sections {
            settings
                .validate()
                .with_context(|| format!("in {section}"))?;
        }
        if let Some(toolset) = &self.toolset.agent {
            toolset.validate().context("in [toolset]")?;
        }
        mcp::cross_check(&self.mcp_servers, &self.toolset.mcp)?;
        for name in self.agents.keys() {
            check_agent_name(name).with_context(|| format!("in [agents.{name}]"))?;
        }
        let servers = (self
            .mcp_servers
            .iter()
            .map(|s| ("the default agent".to_string(), s)))
        .chain(self.agents.iter().flat_map(|(agent, spec)| {
            spec.mcp_servers
                .iter()
                .map(move |s| (format!("[agents.{agent}]"), s))
        }));
        mcp::check_shared(servers)?;
        Ok(())
    }

    /// The default agent's definition as the registry echoes it (see
    /// `AgentVersion::definition` in `crate::agents`).
    pub fn definition(&self) -> serde_json::Value {
        agent::default_definition(self)
    }

    /// The config an agent's tools are loaded with: this one's settings and
    /// per-tool grants, with the agent's toolsets, custom tools and MCP
    /// servers in place of the default agent's.
    pub fn for_agent(&self, spec: &AgentSpec) -> Config {
        Config {
            toolset: spec.toolsets(),
            custom_tools: spec.custom_tools(),
            agent_tools: spec.agent_tools.clone(),
            mcp_servers: spec.mcp_servers.clone(),
            agents: BTreeMap::new(),
            ..self.clone()
        }
    }
}

/// Whether `name` is 1-64 characters of a-z, 0-9, `-` and `_`.
fn is_slug(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// An agent's name is a directory name under the state directory and a
/// path segment of the HTTP API: a slug, and not the default agent's.
pub fn check_agent_name(name: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        is_slug(name),
        "the agent name {name:?} is not a slug: use 1-64 characters of a-z, 0-9, `-` and `_`"
    );
    anyhow::ensure!(
        name != crate::agent_pin::DEFAULT_AGENT,
        "`{name}` is the agent the tools folder and toolhost.toml make; name yours otherwise"
    );
    Ok(())
}

/// A setting from the first layer that sets it.
fn first<T>(layers: &[&ToolSettings], get: impl Fn(&ToolSettings) -> Option<T>) -> Option<T> {
    layers.iter().find_map(|s| get(s))
}

impl ToolSettings {
    fn validate(&self) -> anyhow::Result<()> {
        check_range("timeout_ms", self.timeout_ms, 1..=MAX_TIMEOUT_MS)?;
        check_range("memory_mb", self.memory_mb, 1..=MAX_MEMORY_MB)?;
        let sizes = [
            ("max_input_bytes", self.max_input_bytes, 1),
            ("max_output_bytes", self.max_output_bytes, 1),
            ("max_stdio_bytes", self.max_stdio_bytes, 0),
        ];
        for (key, value, min) in sizes {
            check_range(key, value, min..=MAX_SIZE_CAP)?;
        }
        check_range("max_http_requests", self.max_http_requests, 0..=100_000)?;
        check_range(
            "max_http_response_bytes",
            self.max_http_response_bytes,
            1..=1 << 30,
        )?;
        for bucket in self.kv.iter().flatten() {
            anyhow::ensure!(
                !bucket.is_empty() && bucket.len() <= 128,
                "`kv` bucket name {bucket:?} must be 1-128 characters"
            );
        }
        if let Some(entries) = &self.http {
            AllowList::parse(entries).context("invalid `http` entry")?;
        }
        if let Some(patterns) = &self.sessions {
            Channels::parse(patterns).context("invalid `sessions` grant")?;
        }
        if let Some(patterns) = &self.send_as {
            Principals::parse(patterns).context("invalid `send_as` grant")?;
        }
        for tool in self.reminders.iter().flat_map(|r| &r.tools) {
            anyhow::ensure!(
                !tool.is_empty() && tool.len() <= 128,
                "`reminders.tools` entry {tool:?} must be a tool's name (1-128 characters)"
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<Config> {
        Config::parse(text, Path::new("toolhost.toml"))
    }

    #[test]
    fn unknown_key_is_named_with_its_line() {
        let err = parse("name = \"a\"\n[defaults]\ntimeout_ms = 5\ntimeuot_ms = 6\n").unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("timeuot_ms"), "{msg}");
        assert!(msg.contains("line 4"), "{msg}");
    }

    #[test]
    fn tool_entry_overrides_defaults() {
        let config = parse(
            r#"
            [defaults]
            permission = "always_ask"
            timeout_ms = 2000
            workspace = "read"
            [tools.echo]
            permission = "always_allow"
            memory_mb = 64
            "#,
        )
        .unwrap();
        let echo = config.policy_for("echo").unwrap();
        assert_eq!(echo.permission, Permission::AlwaysAllow);
        assert_eq!(echo.timeout, Duration::from_millis(2000));
        assert_eq!(echo.memory_bytes, 64 << 20);
        assert_eq!(echo.grants.workspace, DirAccess::Read);
        let other = config.policy_for("other").unwrap();
        assert_eq!(other.permission, Permission::AlwaysAsk);
        assert_eq!(other.memory_bytes, (DEFAULT_MEMORY_MB as usize) << 20);
    }

    #[test]
    fn debug_output_hides_env_values() {
        let config = parse("[tools.a]\nenv = { TOKEN = \"s3cret\" }\n").unwrap();
        let shown = format!("{config:?} {:?}", config.policy_for("a").unwrap());
        assert!(
            shown.contains("TOKEN") && !shown.contains("s3cret"),
            "{shown}"
        );
    }

    #[test]
    fn defaults_deny_everything() {
        let policy = Config::default().policy_for("any").unwrap();
        assert!(policy.enabled);
        assert_eq!(policy.grants.workspace, DirAccess::None);
        assert!(policy.grants.kv.is_empty());
        assert!(policy.grants.http.is_empty());
        assert!(policy.grants.env.is_empty());
    }

    #[test]
    fn caps_resolve_per_tool() {
        let config = parse(
            "[defaults]\nmax_output_bytes = 2048\n[tools.a]\nmax_http_requests = 3\nmax_stdio_bytes = 0\n",
        )
        .unwrap();
        let a = config.policy_for("a").unwrap().limits;
        assert_eq!(a.output_bytes, 2048);
        assert_eq!(a.http_requests, Some(3));
        assert_eq!(a.http_response_bytes, None);
        assert_eq!(a.stdio_bytes, 0);
        assert_eq!(a.input_bytes, DEFAULT_MAX_INPUT_BYTES);
        assert!(parse("[defaults]\nmax_output_bytes = 0\n").is_err());
        assert!(parse("[defaults]\nmax_input_bytes = 999999999999\n").is_err());
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let err = parse("[tools.x]\nmemory_mb = 0\n").unwrap_err();
        assert!(format!("{err:#}").contains("[tools.x]"), "{err:#}");
        assert!(parse("[defaults]\ntimeout_ms = 0\n").is_err());
        assert!(parse("[defaults]\npermission = \"sometimes\"\n").is_err());
        assert!(parse("name = \"Has Spaces\"\n").is_err());
        for key in ["session_history_mb", "history_mb"] {
            let err = parse(&format!("[server]\n{key} = 0\n")).unwrap_err();
            assert!(format!("{err:#}").contains(key), "{err:#}");
        }
        for key in ["max_sessions", "max_waiting_calls"] {
            let err = parse(&format!("[server]\n{key} = 0\n")).unwrap_err();
            assert!(format!("{err:#}").contains(key), "{err:#}");
            let ok = parse(&format!("[server]\n{key} = 5\n")).unwrap();
            let server = &ok.server;
            assert_eq!(
                server.max_sessions.or(server.max_waiting_calls),
                Some(5),
                "{key}"
            );
        }
    }

    #[test]
    fn telemetry_and_the_new_grants_are_checked() {
        let ok = parse(
            "[telemetry]\notlp_endpoint = \"http://127.0.0.1:4318\"\nheaders = { x-api-key = \"k\" }\n\
             [tools.t]\nstate = \"read\"\nartifacts = \"write\"\nmetrics = true\n",
        )
        .unwrap();
        assert_eq!(ok.telemetry.export_interval(), Duration::from_secs(60));
        assert!(
            !format!("{:?}", ok.telemetry).contains("\"k\""),
            "header values stay hidden"
        );
        let policy = ok.policy_for("t").unwrap();
        assert_eq!(
            (
                policy.grants.state,
                policy.grants.artifacts,
                policy.grants.metrics
            ),
            (DirAccess::Read, DirAccess::Write, true)
        );
        for (text, expected) in [
            (
                "[telemetry]\notlp_endpoint = \"ftp://x\"\n",
                "not an http:// or https:// URL",
            ),
            (
                "[telemetry]\nexport_interval_ms = 5\n",
                "export_interval_ms",
            ),
            (
                "[telemetry]\nheaders = { \"bad header\" = \"v\" }\n",
                "is not a header name",
            ),
            ("[tools.t]\nstate = \"all\"\n", "state"),
            (
                "[limits]\nsession_artifacts_mb = 0\n",
                "session_artifacts_mb",
            ),
        ] {
            let err = format!("{:#}", parse(text).unwrap_err());
            assert!(err.contains(expected), "{text}: {err}");
        }
    }
}
