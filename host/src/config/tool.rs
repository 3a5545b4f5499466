//! `[defaults]` and `[tools.<name>]`: one tool's settings, their layering
//! into its policy, and its grants.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use super::{MAX_MEMORY_MB, MAX_TIMEOUT_MS, check_range};
use crate::caps::Grants;
use crate::caps::ask::Asked;
use crate::caps::http::AllowList;
use crate::caps::kv;
use crate::caps::reminders::RemindersGrant;
use crate::caps::sessions::{Channels, Principals};
use crate::caps::workspace::{DirAccess, Env};
use crate::usage::HostBudget;

/// Settings that `[defaults]` and `[tools.<name>]` may hold; unset keys
/// inherit. Each grant's type is its capability's (`crate::caps`).
#[derive(Debug, Clone, Default, Deserialize)]
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
    /// Environment variables given to the tool (`Debug` shows their names).
    pub env: Option<Env>,
    /// Whom the tool may ask during a call (`toolhost:tool/ask`).
    pub ask: Option<BTreeSet<Asked>>,
    /// Whether an MCP client's call may be a task (the Tasks extension).
    pub task: Option<TaskSupport>,
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

/// Whether a tool's calls may be tasks for an MCP 2026-07-28 client that
/// declared the Tasks extension (`io.modelcontextprotocol/tasks`): the
/// client polls `tasks/get` for the result instead of holding its request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskSupport {
    /// Never: the request waits for the result.
    Never,
    /// A call still running after `[server] task_after_ms`, or asking
    /// without naming its question, becomes a task.
    #[default]
    Optional,
    /// Every call is a task; a client without the extension is refused.
    Required,
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
    /// Whether an MCP client's call may be a task.
    pub task: TaskSupport,
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

/// A setting from the first layer that sets it.
pub(super) fn first<T>(
    layers: &[&ToolSettings],
    get: impl Fn(&ToolSettings) -> Option<T>,
) -> Option<T> {
    layers.iter().find_map(|s| get(s))
}

impl ToolSettings {
    pub(super) fn validate(&self) -> anyhow::Result<()> {
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
        if let Some(buckets) = &self.kv {
            kv::check_buckets(buckets)?;
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
        if let Some(grant) = &self.reminders {
            grant.check()?;
        }
        Ok(())
    }
}
