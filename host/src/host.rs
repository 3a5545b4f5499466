//! [`Host`]: a loaded tools folder with its engine, config and state.

mod builder;
pub(crate) mod calls;
mod fleet;
mod named;
mod restore;
mod source;
mod versions;

pub use builder::HostBuilder;
pub use named::AgentSource;

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock, Weak};

use anyhow::Context as _;

use self::calls::reminder_limits::{ReminderFigures, ReminderStats};
use self::calls::running::RunningCalls;
use self::calls::{CallObserver, Calls};
use self::fleet::Fleet;
use self::source::Source;
use crate::admission::CallGate;
use crate::agents::{AgentVersion, Agents, Commit, DEFAULT_AGENT, Loaded, VersionInputs};
use crate::caps::ask::AskingSlots;
use crate::caps::http::Network;
use crate::caps::kv::{KvBackend, RedbBackend, RedisBackend};
use crate::caps::resource_updates::ResourceChanges;
use crate::caps::workspace::DirAccess;
use crate::caps::workspace::open_files::FileSlots;
use crate::config::state::Backend;
use crate::config::{Config, redacted};
use crate::envelope::CallResult;
use crate::error::CallError;
use crate::redis_store::lease::LeaseTerms;
use crate::redis_store::{self, RedisStore};
use crate::sandbox::compile_cache::LIVE_TOUCH_INTERVAL;
use crate::sandbox::engine::{EngineOptions, Pins, Tiering, ToolEngine};
use crate::sandbox::tiering;
use crate::session::{HistoryBudget, SessionStore};
use crate::tool_metrics::ToolMetrics;
use crate::tools::lock::Lockfile;
use crate::tools::registry::{LoadOptions, Registry, Scope, Tool};
use crate::upstream::Upstreams;

/// How old a shared store's health check [`Host::shared_health`] reports may be.
const SHARED_HEALTH_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(1);

/// The folder under a host directory where tools live.
pub const TOOLS_DIR: &str = "tools";
/// The folder under a host directory where state (cache, KV) lives.
pub const STATE_DIR: &str = ".toolhost";
/// The state root's directory, under the state directory.
pub const STATE_ROOT_DIR: &str = "state-root";
/// The folder, under a fleet's `[state] workspaces_dir`, holding the
/// component files of every agent version the fleet has recorded (any
/// server loads a version another recorded from them).
pub const SHARED_AGENTS_DIR: &str = ".agents";
/// Instances the pool holds beyond `max_concurrent_calls`, for loading and
/// reloading tools (each asks for its metadata) while calls run.
pub const LOAD_INSTANCES: u32 = 8;

/// A loaded tools folder: call its tools with [`Host::call`].
pub struct Host {
    /// The compilers and the instance pool every tool runs on.
    engine: Arc<ToolEngine>,
    /// The calls: what admits them and what they may hold together
    /// (`[limits]` as the host started), which run, who is told of them.
    calls: Calls,
    /// Every agent's latest version and the versions sessions still use.
    agents: Arc<Agents>,
    /// Whether reloads record the versions they make (see [`Commit`]).
    commit: Commit,
    /// Bumped each time a reload changes the set of tools.
    tool_changes: tokio::sync::watch::Sender<u64>,
    /// The resource addresses calls announce as changed.
    resource_changes: ResourceChanges,
    /// The key-value store, when a tool is granted one.
    kv: Option<Arc<dyn KvBackend>>,
    /// Where it was loaded from, and its config as last read.
    source: Source,
    /// Its part in a fleet, when `[state] backend = "redis"`.
    fleet: Option<Fleet>,
    /// How tools and MCP servers reach the network.
    network: Network,
    /// The custom metrics tools update.
    tool_metrics: Arc<ToolMetrics>,
    /// The sessions tools send messages to, once a server attaches its store.
    sessions: RwLock<Option<Arc<SessionStore>>>,
    /// The connections to the MCP servers the config declares.
    upstreams: Arc<Upstreams>,
    /// Held while the tools are reloaded, and while named agents are
    /// loaded, made or changed: one at a time.
    editing: tokio::sync::Mutex<()>,
}

impl Host {
    /// Tell `observer` of every call's outcome from now on, whichever
    /// surface makes the call.
    pub fn observe(&self, observer: Arc<dyn CallObserver>) {
        self.calls.observe(observer);
    }

    /// Tell every observer of one call's outcome.
    pub(crate) fn tell_observers(&self, tool: &str, outcome: Result<&CallResult, &CallError>) {
        self.calls.tell_observers(tool, outcome);
    }

    /// A builder for the host directory `dir`.
    pub fn builder(dir: impl Into<PathBuf>) -> HostBuilder {
        HostBuilder::new(dir)
    }

    /// The tools currently served: the default agent's latest version's.
    pub fn registry(&self) -> Arc<Registry> {
        self.latest().registry().clone()
    }

    /// The default agent's latest version.
    pub fn latest(&self) -> Arc<AgentVersion> {
        self.agents
            .latest(DEFAULT_AGENT)
            .expect("the default agent has a version from the moment the host is built")
    }

    /// Load the tools folder (and `toolhost.toml` and `tools.lock`) again
    /// and swap the new tools in. Calls already running finish on the tools
    /// they started with; the next call sees the new ones, except in a
    /// session bound to an older version (see [`crate::agents`]): a change
    /// makes the default agent's next version. Subscribers of
    /// [`Host::tool_changes`] hear of it if a tool was added, removed,
    /// changed, enabled or disabled.
    ///
    /// A tool whose file now fails its checks, or differs from `tools.lock`,
    /// keeps its last good version (still listed as a failure, so the
    /// problem is reported). A config that does not parse, or that needs
    /// more memory per instance than the host started with, fails the whole
    /// reload: everything stays as it was. `[server]` and `[limits]` settings
    /// apply at the next start.
    pub async fn reload(&self) -> anyhow::Result<Arc<Registry>> {
        let outcome = self.reload_all().await;
        *self
            .source
            .reload_error
            .write()
            .unwrap_or_else(PoisonError::into_inner) =
            outcome.as_ref().err().map(|e| format!("{e:#}"));
        outcome
    }

    /// Why the last reload failed (the tools loaded before it stay), or
    /// `None` when it succeeded or none has run.
    pub fn reload_error(&self) -> Option<String> {
        self.source
            .reload_error
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    async fn reload_all(&self) -> anyhow::Result<Arc<Registry>> {
        let sources = crate::oci::Sources::new(&self.source.state_dir, self.network.clone());
        // Registries are read before the edit lock is taken: a slow one
        // delays this reload, not the agent edits waiting for the lock.
        let ahead = if self.source.config_from_file {
            Config::load(&self.source.dir).ok().map(Arc::new)
        } else {
            Some(self.config())
        };
        if let Some(config) = ahead.filter(|config| !config.sources.is_empty()) {
            sources
                .fetch_missing(&config.sources, &config.registry_rules())
                .await;
        }
        // One reload, or one change of an agent over the API, at a time.
        let _editing = self.editing.lock().await;
        let previous = self.registry();
        let (config, config_text) = if self.source.config_from_file {
            let (config, text) = Config::load_with_text(&self.source.dir)?;
            anyhow::ensure!(
                config.max_memory_bytes() <= self.engine.max_memory_bytes(),
                "{} asks for {} MiB of memory per instance; this host started with {} MiB: \
                 restart it to raise the cap",
                Config::path_in(&self.source.dir).display(),
                config.max_memory_bytes() >> 20,
                self.engine.max_memory_bytes() >> 20
            );
            (Arc::new(config), text)
        } else {
            (self.config(), None)
        };
        let lock = read_lock(&self.source.dir, self.source.ignore_lock)?;
        let options = LoadOptions {
            sources: Some(&sources),
            previous: Some(&previous),
            tiering: Tiering::BaselineFirst,
            pins: lock.as_ref().map(|lock| lock as &dyn Pins),
            upstreams: Some(&self.upstreams),
            ..LoadOptions::new(&self.source.tools_dir, &config)
        };
        let mut fresh = Registry::load_with(&self.engine, options).await?;
        // Optimized even if this reload fails below: the compile lands in
        // the cache, and a tool kept from it meanwhile runs baseline code.
        tiering::spawn(self.engine.clone(), fresh.take_upgrades());
        anyhow::ensure!(
            self.kv.is_some() || fresh.all().all(|t| t.policy().grants.kv.is_empty()),
            "a tool is now granted `kv`, but this host started without its key-value store: \
             restart it to open the store"
        );
        if let Some(lock) = &lock {
            lock.enforce(&mut fresh);
        }
        fresh.keep_last_good(&previous, |tool| {
            lock.as_ref().is_none_or(|lock| lock.accepts(tool))
        });
        let fresh = Arc::new(fresh);
        let loaded = Loaded {
            registry: fresh.clone(),
            config: config.clone(),
            definition: config.definition(),
            inputs: VersionInputs {
                config: config_text.as_deref().map(redacted::redact).transpose()?,
                ..VersionInputs::default()
            },
        };
        let commit = self.commit;
        let committed = self
            .agents
            .off_thread(move |agents| agents.commit(DEFAULT_AGENT, loaded, commit))
            .await?;
        // Logged here; the fingerprint below decides the announcement.
        self.announce(DEFAULT_AGENT, &committed);
        let fingerprint = |r: &Registry| -> Vec<(String, String, bool)> {
            r.all()
                .map(|t| {
                    (
                        t.name().to_string(),
                        t.sha256().to_string(),
                        t.policy().enabled,
                    )
                })
                .collect()
        };
        *self
            .source
            .config
            .write()
            .unwrap_or_else(PoisonError::into_inner) = config.clone();
        *self
            .source
            .config_text
            .write()
            .unwrap_or_else(PoisonError::into_inner) = config_text;
        self.load_named_agents(&config, Tiering::BaselineFirst)
            .await;
        self.release_versions();
        // Against the version this one replaced (a reload that ran
        // meanwhile may have made it), so one change is announced once.
        let replaced = committed
            .replaced
            .map_or_else(Default::default, |v| v.registry().clone());
        if fingerprint(&replaced) != fingerprint(&fresh) {
            self.tool_changes.send_modify(|n| *n += 1);
        }
        Ok(fresh)
    }

    /// A receiver marked changed whenever an MCP server says its tools
    /// changed: a reload lists them again (see [`crate::reload::watch`]).
    pub fn upstream_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.upstreams.changes()
    }

    /// Stop every MCP server the host started (at shutdown; dropping the
    /// host kills them).
    pub async fn stop_upstreams(&self) {
        self.upstreams.stop_all().await;
    }

    /// A receiver that is marked changed whenever a reload changes the tools.
    pub fn tool_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.tool_changes.subscribe()
    }

    /// Hear of each resource address a call announces as changed from now
    /// on (`toolhost:tool/resource-updates`), for the surfaces that track
    /// subscriptions. A listener more than 1024 behind misses the oldest.
    pub fn resource_updates(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.resource_changes.subscribe()
    }

    /// The slots for calls waiting for an answer.
    pub(crate) fn asking_slots(&self) -> &AskingSlots {
        &self.calls.asking_slots
    }

    /// Where calls announce changed resources.
    pub(crate) fn resource_changes(&self) -> &ResourceChanges {
        &self.resource_changes
    }

    /// What surfaces list: the enabled tools, the toolset tools that are
    /// enabled but cannot run here (`unavailable`, with why), and the
    /// declared toolset as the registry echoes it (`toolsets`).
    pub fn listing(&self) -> serde_json::Value {
        Self::listing_of(&self.latest())
    }

    /// What surfaces list for `version` (see [`Host::listing`]), with the
    /// agent and version it is.
    pub fn listing_of(version: &AgentVersion) -> serde_json::Value {
        let tools = version.registry().tools().map(|t| t.to_json()).collect();
        Self::listing_with(version, tools)
    }

    /// [`Host::listing_of`] with `tools` as each tool is to be shown (a
    /// surface that shows them in more detail builds its own).
    pub fn listing_with(
        version: &AgentVersion,
        tools: Vec<serde_json::Value>,
    ) -> serde_json::Value {
        serde_json::json!({
            "agent": version.pin(),
            "tools": tools,
            "unavailable": version.registry().unavailable(),
            "toolsets": version.config().toolset.to_json(),
        })
    }

    /// The text of `toolhost.toml` the config in force was read from.
    fn config_text(&self) -> Option<String> {
        self.source
            .config_text
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The config in force (a reload may replace it).
    pub fn config(&self) -> Arc<Config> {
        self.source
            .config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The host directory.
    pub fn dir(&self) -> &Path {
        &self.source.dir
    }

    /// The tools folder.
    pub fn tools_dir(&self) -> &Path {
        &self.source.tools_dir
    }

    /// The state directory (compile cache, key-value database).
    pub fn state_dir(&self) -> &Path {
        &self.source.state_dir
    }

    /// The directory tools granted `state` see as `/state`: durable, and
    /// shared by every session and every such tool.
    pub fn state_root(&self) -> &Path {
        &self.source.state_root
    }

    /// The custom metrics tools update (`toolhost:tool/metrics`), for the
    /// exporters.
    pub fn tool_metrics(&self) -> &Arc<ToolMetrics> {
        &self.tool_metrics
    }

    /// Let tools reach the sessions of `store` (`toolhost:tool/sessions`):
    /// the server whose store it is calls this once it has opened it. A
    /// host without one refuses every lookup and send.
    pub fn attach_sessions(&self, store: Arc<SessionStore>) {
        let agents = Arc::clone(&self.agents);
        store.set_pin_source(Arc::new(move || {
            agents.latest(DEFAULT_AGENT).map(|v| v.pin().clone())
        }));
        *self
            .sessions
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(store);
    }

    /// The session store tools reach, if a server attached one.
    pub(crate) fn sessions(&self) -> Option<Arc<SessionStore>> {
        self.sessions
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Where sessions made by the HTTP API are kept (records and
    /// workspaces): `[state] workspaces_dir` when set, which every server
    /// of a fleet mounts.
    pub fn sessions_dir(&self) -> PathBuf {
        match &self.config().state.workspaces_dir {
            Some(dir) => self.source.dir.join(dir),
            None => self.source.state_dir.join("sessions"),
        }
    }

    /// Open the sessions a server hands out, `retention` and `history` as
    /// its options say: on this machine, or shared with the fleet through
    /// Redis when `[state] backend = "redis"`.
    pub fn open_sessions(
        &self,
        retention: std::time::Duration,
        history: HistoryBudget,
    ) -> anyhow::Result<SessionStore> {
        let dir = self.sessions_dir();
        match &self.fleet {
            None => SessionStore::open_with_history(dir, retention, history),
            Some(fleet) => {
                let terms = LeaseTerms::new(self.config().state.session_lease());
                SessionStore::open_fleet(dir, retention, history, fleet.store.clone(), terms)
            }
        }
    }

    /// End the call `call_id` if it runs here (it answers `call_ended`):
    /// whether it did.
    pub fn end_call(&self, call_id: &str) -> bool {
        self.calls.running.end_call(call_id)
    }

    /// End every call running here in the session `id` (each answers
    /// `session_not_found`): how many there were.
    pub fn end_session_calls(&self, id: &str) -> usize {
        self.calls.running.end_session(id)
    }

    /// The session the call `call_id` runs in, while it runs here.
    pub fn session_of_call(&self, call_id: &str) -> Option<String> {
        self.calls.running.session_of(call_id)
    }

    pub(crate) fn running(&self) -> &RunningCalls {
        &self.calls.running
    }

    /// What the reminders fired here did, and the calls they run now.
    pub fn reminder_figures(&self) -> ReminderFigures {
        self.calls.reminder_stats.figures()
    }

    pub(crate) fn reminder_stats(&self) -> &ReminderStats {
        &self.calls.reminder_stats
    }

    /// The admission gate calls pass to run tool code.
    pub fn gate(&self) -> &CallGate {
        &self.calls.gate
    }

    /// The engine.
    pub fn engine(&self) -> &ToolEngine {
        &self.engine
    }

    pub(crate) fn kv_backend(&self) -> Option<&Arc<dyn KvBackend>> {
        self.kv.as_ref()
    }

    /// Refuse a call of `tool` while the shared store its grants need does
    /// not answer, before any of its code runs.
    pub(crate) async fn check_shared_state(&self, tool: &Tool) -> Result<(), CallError> {
        let Some(store) = self.shared_store() else {
            return Ok(());
        };
        if tool.policy().grants.kv.is_empty() {
            return Ok(());
        }
        store
            .ensure_reachable()
            .await
            .map_err(|reason| CallError::StateUnavailable {
                tool: tool.name().to_string(),
                reason,
            })
    }

    /// The Redis server several hosts share, when `[state] backend =
    /// "redis"`: for the surfaces that keep their own state there.
    pub fn shared_store(&self) -> Option<&Arc<RedisStore>> {
        self.fleet.as_ref().map(|fleet| &fleet.store)
    }

    /// Whether the shared store answers (checked at most once a second, one
    /// check at a time): `None` on the embedded
    /// backend, which has nothing to reach.
    pub async fn fleet_health(&self) -> Option<redis_store::Health> {
        match self.shared_store() {
            Some(store) => Some(store.recent_health(SHARED_HEALTH_MAX_AGE).await),
            None => None,
        }
    }

    /// How tools reach the network.
    pub(crate) fn network(&self) -> &Network {
        &self.network
    }

    /// The host-wide slots for tools' open workspace files.
    pub fn file_slots(&self) -> &FileSlots {
        &self.calls.file_slots
    }
}

/// The lock of the host directory `dir`, unless the host ignores it.
fn read_lock(dir: &Path, ignore: bool) -> anyhow::Result<Option<Lockfile>> {
    if ignore {
        return Ok(None);
    }
    Lockfile::load(dir)
}
