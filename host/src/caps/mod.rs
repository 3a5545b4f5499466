//! One module per capability a sandbox may be granted.
//!
//! Each has the same shape: a context built from the tool's grant and the
//! call's effect, the host side of its interfaces, and an `add_to_linker`.
//! The grant is checked inside the host function; a refusal is an error the
//! guest sees (`access-denied`, `HTTP-request-denied`), never a trap.
//! `wasi:sockets` is linked (toolchains import it) and always denied: see
//! [`workspace::WasiSetup`].
//!
//! `Caps::for_call` assembles them for one instance, narrowed once by the
//! call's effect; `Caps::none` is the set with every grant refused.

pub mod artifacts;
pub mod ask;
pub mod context;
pub mod grant_ctx;
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

use crate::config::{DirAccess, Grants};
use crate::tool::Effect;
use crate::usage::Meter;
use artifacts::{ArtifactsCtx, ArtifactsGrant};
use ask::AskCtx;
use context::Mounts;
use http::{HttpCtx, Network, RequestBudget};
use kv::{KvBackend, KvCtx};
use log::{LogLine, TraceLog};
use metrics::MetricsCtx;
use progress::{Progress, ProgressFeed};
use reminders::{RemindersCtx, Scheduler};
use resource_updates::ResourceUpdates;
use sessions::{SessionsCtx, SessionsGrant};
use stdio::Capture;
use workspace::WasiSetup;
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

/// The capabilities one instance gets.
pub(crate) struct Caps {
    /// The workspace, environment, stdio and always-denied sockets.
    pub wasi: WasiCtx,
    /// Outbound HTTP.
    pub http: HttpCtx,
    /// Key-value storage.
    pub kv: KvCtx,
    /// The workspace files the instance holds open, each with its
    /// host-wide slot.
    pub files: OpenFiles,
    /// Where its progress reports go.
    pub progress: ProgressFeed,
    /// Which resource changes it may announce, and to whom.
    pub resource_updates: ResourceUpdates,
    /// Whom it may ask, and how.
    pub ask: AskCtx,
    /// Which directories it has mounted.
    pub mounts: Mounts,
    /// The session's artifacts it may list or save.
    pub artifacts: ArtifactsCtx,
    /// The custom metrics it may update.
    pub metrics: MetricsCtx,
    /// The sessions it may look up and send to.
    pub sessions: SessionsCtx,
    /// The reminders it may schedule in its session.
    pub reminders: RemindersCtx,
}

/// What the capabilities of one call share with the pipeline, across its
/// instances: where log lines, stdio, host memory and requests are counted.
pub(crate) struct CallShared<'a> {
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

impl Caps {
    /// What `grants` give a call of `effect`: a read gets the read-only
    /// form of each grant. `workspace` is the session's directory the call
    /// mounts, `kv` the host's store (none when no tool is granted one).
    pub fn for_call(
        grants: &Grants,
        effect: Effect,
        workspace: Option<&Path>,
        kv: Option<&Arc<dyn KvBackend>>,
        shared: &CallShared<'_>,
    ) -> anyhow::Result<Self> {
        let read_only = effect == Effect::Read;
        let kv = match kv {
            Some(backend) if !grants.kv.is_empty() => {
                KvCtx::new(Arc::clone(backend), grants.kv.clone(), read_only)
                    .with_meter(shared.meter.clone())
            }
            _ => KvCtx::deny_all(),
        };
        let workspace = workspace.zip(workspace::permissions(grants.workspace, read_only));
        let state = workspace::permissions(grants.state, read_only).map(|p| (shared.state_root, p));
        let artifacts = match (shared.in_session, grants.artifacts) {
            (_, DirAccess::None) => ArtifactsCtx::refused(
                "artifacts are not granted to this tool (`artifacts = \"write\"` in its \
                 [tools.<name>] saves them)",
            ),
            (None, _) => ArtifactsCtx::refused("a prompt or resource request has no session"),
            (Some(call), access) => ArtifactsCtx::granted(ArtifactsGrant {
                session: Arc::clone(call.session),
                budget: call.budget,
                writable: access == DirAccess::Write && !read_only,
                call_id: call.call_id.to_string(),
                tool: call.tool.to_string(),
                mounts: [
                    (workspace::GUEST_PATH, workspace.map(|(dir, _)| dir)),
                    (workspace::STATE_GUEST_PATH, state.map(|(dir, _)| dir)),
                ]
                .into_iter()
                .filter_map(|(mount, dir)| Some((mount, dir?.to_path_buf())))
                .collect(),
                meter: shared.meter.clone(),
            }),
        };
        let sessions = match (shared.in_session, shared.sessions) {
            _ if grants.sessions.is_empty() => SessionsCtx::refused(
                "sessions are not granted to this tool (`sessions = [\"<channel>\"]` in its \
                 [tools.<name>] reaches them)",
            ),
            (None, _) => SessionsCtx::refused("a prompt or resource request has no session"),
            (_, None) => SessionsCtx::refused(
                "this host keeps no sessions: a one-shot `tool call` cannot reach them (run \
                 the tool under `toolhost serve` or `toolhost mcp`)",
            ),
            (Some(call), Some(store)) => SessionsCtx::granted(SessionsGrant {
                store: Arc::clone(store),
                channels: grants.sessions.clone(),
                send_as: grants.send_as.clone(),
                may_send: !read_only,
                from: Arc::clone(call.session),
                call_id: call.call_id.to_string(),
                tool: call.tool.to_string(),
                meter: shared.meter.clone(),
            }),
        };
        let reminders = match (&grants.reminders, shared.in_session, shared.sessions) {
            (None, _, _) => RemindersCtx::refused(
                "reminders are not granted to this tool (`reminders = { tools = [] }` in its \
                 [tools.<name>] schedules messages)",
            ),
            (_, None, _) => RemindersCtx::refused("a prompt or resource request has no session"),
            (_, _, None) => RemindersCtx::refused(
                "this host keeps no sessions: a one-shot `tool call` cannot schedule reminders \
                 (run the tool under `toolhost serve` or `toolhost mcp`)",
            ),
            (Some(_), Some(call), Some(store)) if !store.holds(call.session) => {
                RemindersCtx::refused(
                    "this call's session ends with the call: reminders need a session the \
                     server keeps (create one, then call in it with `sessionId`)",
                )
            }
            (Some(grant), Some(call), Some(store)) => match shared.reminder_check {
                None => RemindersCtx::refused("the host's tools are not at hand"),
                Some(check) => RemindersCtx::granted(Scheduler {
                    store: Arc::clone(store),
                    session: Arc::clone(call.session),
                    grant: grant.clone(),
                    check: Arc::clone(check),
                    writable: !read_only,
                    call_id: call.call_id.to_string(),
                    tool: call.tool.to_string(),
                    chain: call.reminder_chain,
                    meter: shared.meter.clone(),
                }),
            },
        };
        Ok(Self {
            sessions,
            reminders,
            mounts: Mounts {
                workspace: workspace.is_some(),
                state: state.is_some(),
            },
            artifacts,
            metrics: match grants.metrics {
                true => MetricsCtx::granted(metrics::Updates {
                    metrics: Arc::clone(shared.metrics.0),
                    tool: shared.metrics.1.to_string(),
                    meter: shared.meter.clone(),
                }),
                false => MetricsCtx::refused(
                    "metrics are not granted to this tool (`metrics = true` in its \
                     [tools.<name>])",
                ),
            },
            wasi: WasiSetup {
                workspace,
                state,
                env: &grants.env,
                stdout: shared.stdout.clone(),
                stderr: shared.stderr.clone(),
            }
            .build()?,
            http: HttpCtx::new(
                shared.network.clone(),
                Arc::clone(&grants.http),
                read_only,
                shared.trace.clone(),
            )
            .with_budget(shared.http_budget.clone()),
            kv,
            files: OpenFiles::new(shared.file_slots.clone()),
            progress: shared.progress.clone(),
            resource_updates: shared.resource_updates.clone(),
            ask: shared.ask.clone(),
        })
    }

    /// No workspace, KV, HTTP or environment (so no file to open): for
    /// metadata, effect-for and dry-run.
    pub fn none(trace: &TraceLog, stdout: &Capture, stderr: &Capture) -> anyhow::Result<Self> {
        let env = Default::default();
        Ok(Self {
            mounts: Mounts::default(),
            artifacts: ArtifactsCtx::refused("loading, effect-for or dry-run"),
            metrics: MetricsCtx::refused(
                "metrics are not updated during loading, effect-for or dry-run",
            ),
            sessions: SessionsCtx::refused("loading, effect-for or dry-run"),
            reminders: RemindersCtx::refused("loading, effect-for or dry-run"),
            wasi: WasiSetup {
                workspace: None,
                state: None,
                env: &env,
                stdout: stdout.clone(),
                stderr: stderr.clone(),
            }
            .build()?,
            http: HttpCtx::deny_all(trace.clone()),
            kv: KvCtx::deny_all(),
            files: OpenFiles::new(FileSlots::with_cap(0)),
            progress: ProgressFeed::default(),
            resource_updates: ResourceUpdates::refused("loading, effect-for or dry-run"),
            ask: AskCtx::refused("loading, effect-for or dry-run"),
        })
    }
}

/// Whether `grants` serve, grant or refuse the interface `import` (a
/// component's import, version included), as `inspect` shows it: each
/// capability describes its own interfaces.
pub fn import_status(grants: &Grants, import: &str) -> String {
    let interface = import.split('@').next().unwrap_or(import);
    workspace::import_status(grants, interface)
        .or_else(|| artifacts::import_status(grants.artifacts, interface))
        .or_else(|| metrics::import_status(grants.metrics, interface))
        .or_else(|| sessions::import_status(&grants.sessions, &grants.send_as, interface))
        .or_else(|| reminders::import_status(grants.reminders.as_ref(), interface))
        .or_else(|| kv::import_status(&grants.kv, interface))
        .or_else(|| http::import_status(&grants.http, interface))
        .unwrap_or_else(|| "served".into())
}
