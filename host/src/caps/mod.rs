//! One module per capability a sandbox may be granted.
//!
//! Each holds the whole capability: its grant as `[tools.<name>]` writes
//! it (the type, its checks, its `tools.lock` entry and what `inspect`
//! says of it), its per-instance context (`Capability`: made from the
//! tool's [`Grants`] and the call's `CallScope`, or refused with a
//! reason), the host side of its interfaces, and its `add_to_linker`. The
//! grant is checked inside the host function; a refusal is an error the
//! guest sees (`access-denied`, `HTTP-request-denied`), never a trap.
//! `wasi:sockets` is linked (toolchains import it) and always denied: see
//! [`workspace::WasiSetup`].
//!
//! `Caps` is one field per capability: `Caps::for_call` makes each for one
//! instance, narrowed once by the call's effect; `Caps::none` is the set
//! outside a call, every grant refused. Adding a capability is its module
//! plus one line in each list of them (docs/ARCHITECTURE.md, rule 2).

pub mod artifacts;
pub mod ask;
pub mod context;
pub mod grant_ctx;
pub mod grants;
pub mod http;
pub mod kv;
pub mod log;
pub mod metrics;
pub mod progress;
pub mod reminders;
pub mod resource_updates;
pub mod sessions;
pub mod stdio;
pub mod workspace;

use std::path::Path;
use std::sync::Arc;

use wasmtime_wasi::WasiCtx;

pub use grants::Grants;

use crate::usage::Meter;
use artifacts::ArtifactsCtx;
use ask::AskCtx;
use context::Mounts;
use http::{HttpCtx, Network, RequestBudget};
use kv::{KvBackend, KvCtx};
use log::{LogLine, TraceLog};
use metrics::MetricsCtx;
use progress::{Progress, ProgressFeed};
use reminders::RemindersCtx;
use resource_updates::ResourceUpdates;
use sessions::SessionsCtx;
use stdio::Capture;
use workspace::open_files::{FileSlots, OpenFiles};

/// Sees what a running call tells its caller before it ends: each log line
/// it keeps and each progress report it accepts (MCP sends them to the
/// client as they come). Called from the tool's own host calls, so it must
/// not block.
pub trait CallWatcher: Send + Sync {
    /// The tool logged `line` (cut as the trace keeps it).
    fn log(&self, line: &LogLine) {
        let _ = line;
    }

    /// The tool reported progress (`done` grows from report to report).
    fn progress(&self, report: &Progress) {
        let _ = report;
    }
}

/// One capability's context in one instance, as `Caps` holds it.
pub(crate) trait Capability: Sized {
    /// What `grants` give an instance of a call in `scope`: the grant
    /// narrowed by the call's effect, or the refusal, with its reason,
    /// the guest sees.
    fn for_call(grants: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self>;

    /// The context of an instance outside a call (loading, `effect-for`,
    /// `dry-run-result`): refused, but for what the contract always serves.
    fn outside_a_call(outside: &Outside<'_>) -> anyhow::Result<Self>;
}

/// The capabilities one instance gets: one field per capability.
pub(crate) struct Caps {
    /// The workspace, environment, stdio and always-denied sockets.
    pub wasi: WasiCtx,
    /// The workspace files the instance holds open, each with its
    /// host-wide slot.
    pub files: OpenFiles,
    /// Which directories it has mounted.
    pub mounts: Mounts,
    /// Outbound HTTP.
    pub http: HttpCtx,
    /// Key-value storage.
    pub kv: KvCtx,
    /// Where its progress reports go.
    pub progress: ProgressFeed,
    /// Which resource changes it may announce, and to whom.
    pub resource_updates: ResourceUpdates,
    /// Whom it may ask, and how.
    pub ask: AskCtx,
    /// The session's artifacts it may list or save.
    pub artifacts: ArtifactsCtx,
    /// The custom metrics it may update.
    pub metrics: MetricsCtx,
    /// The sessions it may look up and send to.
    pub sessions: SessionsCtx,
    /// The reminders it may schedule in its session.
    pub reminders: RemindersCtx,
}

/// What one call's capabilities are made from besides the tool's grants:
/// the call's effect and place, and what they share with the pipeline
/// across its instances (where log lines, stdio, host memory and requests
/// are counted).
pub(crate) struct CallScope<'a> {
    /// Whether the call's effect is `read`: each grant is narrowed to its
    /// read-only form.
    pub read_only: bool,
    /// The session's directory the call mounts, if it has one.
    pub workspace: Option<&'a Path>,
    /// The host's key-value store (none when no tool is granted one).
    pub kv: Option<&'a Arc<dyn KvBackend>>,
    /// The call's trace.
    pub trace: &'a TraceLog,
    /// Its stdout capture.
    pub stdout: &'a Capture,
    /// Its stderr capture.
    pub stderr: &'a Capture,
    /// Its host-memory meter.
    pub meter: &'a Arc<Meter>,
    /// The host's network, with the tool's HTTP caps.
    pub network: &'a Network,
    /// Its outbound request budget.
    pub http_budget: &'a RequestBudget,
    /// The host's slots for open workspace files.
    pub file_slots: &'a FileSlots,
    /// The host's state root, mounted where the grant says.
    pub state_root: &'a Path,
    /// The host's custom metrics, with the name of the tool updating them.
    pub metrics: (&'a Arc<crate::tool_metrics::ToolMetrics>, &'a str),
    /// Its progress reports.
    pub progress: &'a ProgressFeed,
    /// The resource changes it announces.
    pub resource_updates: &'a ResourceUpdates,
    /// Its questions.
    pub ask: &'a AskCtx,
    /// The call's place in its session; `None` where there is no session
    /// (a prompt or resource request).
    pub in_session: Option<&'a InSession<'a>>,
    /// The sessions a server attached to the host, if one did.
    pub sessions: Option<&'a Arc<crate::session::SessionStore>>,
    /// How reminders check the call they schedule, where the tool is
    /// granted reminders.
    pub reminder_check: Option<&'a reminders::CallCheck>,
}

/// A call's place in its session: who saves its artifacts and sends its
/// messages, and where.
pub(crate) struct InSession<'a> {
    /// The call's session.
    pub session: &'a Arc<crate::session::Session>,
    /// The call's id.
    pub call_id: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The most bytes the session's artifacts may take together.
    pub budget: u64,
    /// How many reminders led to the call (0 for a client's).
    pub reminder_chain: u32,
}

/// Where an instance outside a call writes what it prints and logs.
pub(crate) struct Outside<'a> {
    /// Its trace.
    pub trace: &'a TraceLog,
    /// Its stdout capture.
    pub stdout: &'a Capture,
    /// Its stderr capture.
    pub stderr: &'a Capture,
}

/// Why each grant is refused outside a call.
pub(crate) const OUTSIDE_A_CALL: &str = "loading, effect-for or dry-run";

impl Caps {
    /// What `grants` give one instance of a call in `scope`.
    pub fn for_call(grants: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        Ok(Self {
            wasi: Capability::for_call(grants, scope)?,
            files: Capability::for_call(grants, scope)?,
            mounts: Capability::for_call(grants, scope)?,
            http: Capability::for_call(grants, scope)?,
            kv: Capability::for_call(grants, scope)?,
            progress: Capability::for_call(grants, scope)?,
            resource_updates: Capability::for_call(grants, scope)?,
            ask: Capability::for_call(grants, scope)?,
            artifacts: Capability::for_call(grants, scope)?,
            metrics: Capability::for_call(grants, scope)?,
            sessions: Capability::for_call(grants, scope)?,
            reminders: Capability::for_call(grants, scope)?,
        })
    }

    /// No workspace, KV, HTTP or environment (so no file to open): for
    /// metadata, effect-for and dry-run.
    pub fn none(trace: &TraceLog, stdout: &Capture, stderr: &Capture) -> anyhow::Result<Self> {
        let outside = &Outside {
            trace,
            stdout,
            stderr,
        };
        Ok(Self {
            wasi: Capability::outside_a_call(outside)?,
            files: Capability::outside_a_call(outside)?,
            mounts: Capability::outside_a_call(outside)?,
            http: Capability::outside_a_call(outside)?,
            kv: Capability::outside_a_call(outside)?,
            progress: Capability::outside_a_call(outside)?,
            resource_updates: Capability::outside_a_call(outside)?,
            ask: Capability::outside_a_call(outside)?,
            artifacts: Capability::outside_a_call(outside)?,
            metrics: Capability::outside_a_call(outside)?,
            sessions: Capability::outside_a_call(outside)?,
            reminders: Capability::outside_a_call(outside)?,
        })
    }
}

/// Whether `grants` serve, grant or refuse the interface `import` (a
/// component's import, version included), as `inspect` shows it: each
/// capability describes its own interfaces.
pub fn import_status(grants: &Grants, import: &str) -> String {
    let interface = import.split('@').next().unwrap_or(import);
    [
        workspace::import_status,
        artifacts::import_status,
        metrics::import_status,
        sessions::import_status,
        reminders::import_status,
        kv::import_status,
        http::import_status,
    ]
    .iter()
    .find_map(|status| status(grants, interface))
    .unwrap_or_else(|| "served".into())
}
