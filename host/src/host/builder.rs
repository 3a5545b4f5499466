//! [`HostBuilder`]: how a [`Host`] is made from a host directory.

use super::*;

/// Builds a [`Host`] from a directory holding `toolhost.toml` and `tools/`.
#[derive(Debug, Clone)]
pub struct HostBuilder {
    dir: PathBuf,
    tools_dir: Option<PathBuf>,
    state_dir: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    config: Option<Config>,
    max_instances: Option<u32>,
    network: Network,
    ignore_lock: bool,
    tiering: Tiering,
    only: Option<String>,
}

impl HostBuilder {
    /// A builder for the host directory `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            tools_dir: None,
            state_dir: None,
            cache_dir: None,
            config: None,
            max_instances: None,
            network: Network::system(),
            ignore_lock: false,
            tiering: Tiering::Optimized,
            only: None,
        }
    }

    /// Load tools from this folder instead of `<dir>/tools`.
    pub fn tools_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.tools_dir = Some(dir.into());
        self
    }

    /// Keep state here instead of `<dir>/.toolhost`.
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// Keep the compile cache here instead of `<state dir>/cache` (it may be
    /// shared by several hosts: entries are keyed by content and engine).
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Use this config instead of reading `<dir>/toolhost.toml`.
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// How many instances may be alive at once (default: `[limits]
    /// max_concurrent_calls` plus [`LOAD_INSTANCES`]); an instance past it
    /// waits for a free place until its call's deadline.
    pub fn max_instances(mut self, n: u32) -> Self {
        self.max_instances = Some(n);
        self
    }

    /// Reach the network for tools through `network` (its resolver, dialer
    /// and HTTP limits) instead of [`Network::system`].
    pub fn network(mut self, network: Network) -> Self {
        self.network = network;
        self
    }

    /// Load every tool whatever `tools.lock` says (for `toolhost lock`,
    /// which writes it).
    pub fn ignore_lock(mut self) -> Self {
        self.ignore_lock = true;
        self
    }

    /// How to compile, at start, a component the compile cache does not
    /// hold: [`Tiering::Optimized`] (the default) with Cranelift before
    /// `build` returns, or [`Tiering::BaselineFirst`] with Winch, so the
    /// host serves in a fraction of the time and swaps each tool's
    /// Cranelift code in when its background compile is done (for a
    /// long-running server; a one-shot process would exit first).
    /// Reloads always compile baseline first.
    pub fn tiering(mut self, tiering: Tiering) -> Self {
        self.tiering = tiering;
        self
    }

    /// Load only what a call of the tool `name` needs (for a one-shot
    /// command): the files that can give it (`name.wasm`, or a plain
    /// component `<slug>.wasm` whose function it names) and, if it is one,
    /// its toolset tool. The folder-wide checks still count and check every
    /// other file, by the names a load last recorded for it (or as one tool
    /// when none has), without compiling it. When no file, toolset or custom
    /// tool can give `name`, the MCP servers are listed, and no file is
    /// compiled if one of them offers it; otherwise everything is loaded, so
    /// the unknown-tool error lists every tool. Servers start only when they
    /// are listed.
    pub fn only(mut self, name: impl Into<String>) -> Self {
        self.only = Some(name.into());
        self
    }

    /// Read the config, start the engine and load every tool; when
    /// `<dir>/tools.lock` exists, refuse the tools that differ from it.
    pub async fn build(self) -> anyhow::Result<Host> {
        let config_from_file = self.config.is_none();
        let (config, config_text) = match self.config {
            Some(config) => {
                config.validate().context("invalid config")?;
                (config, None)
            }
            None => Config::load_with_text(&self.dir)?,
        };
        let tools_dir = self.tools_dir.unwrap_or_else(|| self.dir.join(TOOLS_DIR));
        let state_dir = self.state_dir.unwrap_or_else(|| self.dir.join(STATE_DIR));
        crate::files::create_private_dir(&state_dir)?;
        let state_root = match &config.state.state_files_dir {
            Some(dir) => self.dir.join(dir),
            None => state_dir.join(STATE_ROOT_DIR),
        };
        crate::files::create_private_dir(&state_root)?;
        let calls = config.limits.concurrent_calls();
        let engine = Arc::new(ToolEngine::new(&EngineOptions {
            max_memory_bytes: config.max_memory_bytes(),
            max_instances: self
                .max_instances
                .unwrap_or(calls.saturating_add(LOAD_INSTANCES)),
            cache_dir: self.cache_dir.unwrap_or_else(|| state_dir.join("cache")),
            cache_max_bytes: config.limits.compile_cache_bytes(),
            shared_cache: config.state.shared_compile_cache().context("in [state]")?,
        })?);
        // Read first: no file that differs from the lock is compiled or run.
        let lock = read_lock(&self.dir, self.ignore_lock)?;
        let upstreams = Arc::new(Upstreams::new(self.dir.clone(), self.network.clone()));
        let sources = crate::oci::Sources::new(&state_dir, self.network.clone());
        let options = LoadOptions {
            sources: Some(&sources),
            tiering: self.tiering,
            pins: lock.as_ref().map(|lock| lock as &dyn Pins),
            scope: match &self.only {
                Some(name) => Scope::Only(name),
                None => Scope::Everything,
            },
            upstreams: Some(&upstreams),
            ..LoadOptions::new(&tools_dir, &config)
        };
        let mut registry = Registry::load_with(&engine, options).await?;
        upstreams.start_eager(&config);
        tiering::spawn(engine.clone(), registry.take_upgrades());
        if let Some(lock) = &lock {
            lock.enforce(&mut registry);
        }
        let needs_kv = registry.all().any(|t| !t.policy().grants.kv.is_empty());
        check_shared_state_root(&config, &registry)?;
        let config = Arc::new(config);
        let shared = match config.state.backend {
            Backend::Embedded => None,
            Backend::Redis => Some(config.state.open_redis().context("in [state]")?),
        };
        let agents = Arc::new(match (&shared, &config.state.workspaces_dir) {
            (Some(store), Some(workspaces)) => Agents::shared(
                &state_dir,
                store.clone(),
                &self.dir.join(workspaces).join(SHARED_AGENTS_DIR),
            ),
            _ => Agents::new(&state_dir),
        });
        let commit = if self.only.is_some() || self.ignore_lock {
            Commit::Unrecorded
        } else {
            Commit::Recorded
        };
        let loaded = Loaded {
            registry: Arc::new(registry),
            config: config.clone(),
            definition: config.definition(),
            inputs: VersionInputs {
                config: config_text.as_deref().map(redacted::redact).transpose()?,
                ..VersionInputs::default()
            },
        };
        agents
            .off_thread(move |agents| agents.commit(DEFAULT_AGENT, loaded, commit))
            .await?;
        let kv = open_kv(shared.as_ref(), needs_kv, &state_dir)?;
        let host = Host {
            calls: Calls::new(&config.limits),
            engine,
            agents,
            commit,
            tool_changes: tokio::sync::watch::Sender::new(0),
            resource_changes: ResourceChanges::default(),
            source: Source {
                dir: self.dir,
                tools_dir,
                state_dir,
                state_root,
                config: RwLock::new(config),
                config_text: RwLock::new(config_text),
                config_from_file,
                ignore_lock: self.ignore_lock,
                reload_error: RwLock::default(),
            },
            kv,
            fleet: shared.map(Fleet::new),
            network: self.network,
            tool_metrics: Arc::default(),
            sessions: RwLock::default(),
            upstreams,
            editing: tokio::sync::Mutex::default(),
        };
        if host.config().state.shared_compile_cache.is_some() {
            keep_shared_compilations(Arc::downgrade(&host.agents), host.engine.clone());
        }
        if self.only.is_none() {
            let config = host.config();
            let _editing = host.editing.lock().await;
            host.load_named_agents(&config, self.tiering).await;
            for name in host.agent_names() {
                if let Some(version) = host.agents.latest(&name).filter(|_| name != DEFAULT_AGENT) {
                    host.upstreams.start_eager(version.config());
                }
            }
        }
        Ok(host)
    }
}

/// A fleet's servers share what tools see at `/state` only through a folder
/// every server mounts: refuse a Redis backend without one while a tool is
/// granted `state`.
fn check_shared_state_root(config: &Config, registry: &Registry) -> anyhow::Result<()> {
    if config.state.backend != Backend::Redis || config.state.state_files_dir.is_some() {
        return Ok(());
    }
    let granted = registry
        .all()
        .find(|t| t.policy().grants.state != DirAccess::None);
    if let Some(tool) = granted {
        anyhow::bail!(
            "tool `{}` is granted `state`, so `[state] backend = \"redis\"` needs \
             `state_files_dir`: a folder every server mounts, seen by tools at /state",
            tool.name()
        );
    }
    Ok(())
}

/// The key-value store: the fleet's Redis, else the embedded one in
/// `state_dir`, opened only when a tool is granted `kv` (`needs_kv`).
fn open_kv(
    shared: Option<&Arc<RedisStore>>,
    needs_kv: bool,
    state_dir: &Path,
) -> anyhow::Result<Option<Arc<dyn KvBackend>>> {
    Ok(match shared {
        Some(store) => Some(Arc::new(RedisBackend::new(store.clone()))),
        None if needs_kv => {
            let path = state_dir.join("kv.redb");
            Some(Arc::new(RedbBackend::open(&path).with_context(
                || "the key-value store is needed because a tool is granted `kv`",
            )?))
        }
        None => None,
    })
}

/// While `agents` lives, mark the shared compilations its loaded versions
/// run as in use every [`LIVE_TOUCH_INTERVAL`], so no server sharing the
/// compile cache evicts them.
fn keep_shared_compilations(agents: Weak<Agents>, engine: Arc<ToolEngine>) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(LIVE_TOUCH_INTERVAL);
        loop {
            ticks.tick().await;
            let Some(agents) = agents.upgrade() else {
                return;
            };
            let components = agents.loaded_components();
            drop(agents);
            engine.keep_cached(components).await;
        }
    });
}
