//! Agents and their versions. An agent is a named tool set; every change to
//! it (a reload that changes a component, a definition, a grant or a
//! policy) makes a new, immutable, numbered version, recorded with the
//! digests of everything in it. A session is bound to the version it was
//! created from ([`AgentPin`]) and its calls run that version's tools until
//! it is upgraded or ends; a version no session uses any more, and that is
//! not its agent's latest, is dropped with its code.
//!
//! The host's own tools folder and `toolhost.toml` make the agent
//! [`DEFAULT_AGENT`].

mod definitions;
mod fleet;
mod inputs;
mod record;
mod shelf;
mod stored;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use anyhow::Context as _;

pub use definitions::DEFINITION_FILE;
pub(crate) use definitions::StoredAgents;
pub use inputs::{BLOBS_DIR, VersionInputs};
pub use record::{MAX_RECORDS, PolicyEntry, ToolEntry, VersionDiff, VersionRecord};
pub use stored::StoredAgent;

pub use crate::agent_pin::{AgentPin, DEFAULT_AGENT};
use crate::config::Config;
use crate::redis_store::RedisStore;
use crate::tools::registry::Registry;
use fleet::FleetAgents;
use inputs::Blobs;
use shelf::RecordShelf;

/// How long a fleet keeps a component file no version record names: a
/// server keeps a new version's files before its record names them.
const SHARED_BLOB_GRACE: std::time::Duration = std::time::Duration::from_secs(3600);

/// The folder under the state directory where version records are kept.
pub const AGENTS_DIR: &str = "agents";

/// One immutable version of an agent: its tools, the config they were
/// loaded with, and its record.
pub struct AgentVersion {
    pin: AgentPin,
    registry: Arc<Registry>,
    config: Arc<Config>,
    definition: serde_json::Value,
    record: Arc<VersionRecord>,
}

impl std::fmt::Debug for AgentVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentVersion")
            .field("pin", &self.pin)
            .finish_non_exhaustive()
    }
}

impl AgentVersion {
    /// Which agent and version this is.
    pub fn pin(&self) -> &AgentPin {
        &self.pin
    }

    /// Its tools.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The config its tools were loaded with.
    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    /// Its definition as the registry echoes it: `tools` (the toolsets
    /// and custom tools, defaults filled in), `mcp_servers` and
    /// `components`.
    pub fn definition(&self) -> &serde_json::Value {
        &self.definition
    }

    /// Its record: each tool's digests and policy.
    pub fn record(&self) -> &VersionRecord {
        &self.record
    }
}

/// Why an agent or version asked for cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// No agent has this name.
    #[error("unknown agent `{name}` (this host serves: {})", .known.join(", "))]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The agents served.
        known: Vec<String>,
    },
    /// The agent has no such version on record.
    #[error("agent `{agent}` has no version {version} (its latest is {latest})")]
    VersionNotFound {
        /// The agent.
        agent: String,
        /// The version asked for.
        version: u64,
        /// Its latest version.
        latest: u64,
    },
    /// The version is on record, but its code is no longer loaded: no
    /// session used it, or the host restarted since.
    #[error(
        "version {version} of agent `{agent}` is on record but no longer loaded (only versions \
         sessions use stay loaded); use its latest, version {latest}"
    )]
    VersionNotLoaded {
        /// The agent.
        agent: String,
        /// The version asked for.
        version: u64,
        /// Its latest version.
        latest: u64,
    },
    /// An agent definition that breaks a rule, or whose tools do not load.
    #[error("invalid agent `{name}`: {reason}")]
    Invalid {
        /// The agent.
        name: String,
        /// Which rule, where.
        reason: String,
    },
    /// An agent of this name exists already.
    #[error("an agent named `{name}` exists already")]
    Exists {
        /// The name asked for.
        name: String,
    },
    /// The agent is declared in `toolhost.toml` (or is the default one):
    /// it changes when the file does.
    #[error(
        "the agent `{name}` is declared in toolhost.toml, not made over the API: edit the file \
         and the host reloads it"
    )]
    NotEditable {
        /// The agent.
        name: String,
    },
    /// The fleet's store (Redis) did not answer.
    #[error("{0:#}")]
    Unavailable(anyhow::Error),
    /// The version records could not be read or written.
    #[error("{0:#}")]
    Io(anyhow::Error),
}

impl From<anyhow::Error> for AgentError {
    fn from(error: anyhow::Error) -> Self {
        if error.chain().any(|cause| cause.is::<fleet::Unavailable>()) {
            Self::Unavailable(error)
        } else {
            Self::Io(error)
        }
    }
}

impl AgentError {
    /// The stable code surfaces report.
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownAgent { .. } => "agent_not_found",
            Self::VersionNotFound { .. } => "agent_version_not_found",
            Self::VersionNotLoaded { .. } => "agent_version_unavailable",
            Self::Invalid { .. } => "invalid_agent",
            Self::Exists { .. } => "agent_exists",
            Self::NotEditable { .. } => "agent_not_editable",
            Self::Unavailable(_) => "state_unavailable",
            Self::Io(_) => "internal_error",
        }
    }
}

/// The versions loaded now, and the code they hold.
#[derive(Debug, Clone, Default)]
pub struct LoadedVersions {
    /// Each loaded version, and whether it is its agent's latest.
    pub versions: Vec<(AgentPin, bool)>,
    /// Distinct compiled components they hold (versions share the code of
    /// the tools they have in common).
    pub components: usize,
    /// Bytes of compiled code those components take.
    pub code_bytes: usize,
}

/// Whether a committed version is recorded on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// A host that serves its tools: a new version is recorded.
    Recorded,
    /// A one-shot command that loaded part of the folder, or `toolhost
    /// lock` loading what the lock would refuse: its tools are the newest
    /// recorded version's when every loaded tool matches that version's
    /// entry, and an unrecorded next number otherwise.
    Unrecorded,
}

/// An agent's tools as just loaded, to commit as a version.
pub(crate) struct Loaded {
    /// Its tools.
    pub registry: Arc<Registry>,
    /// The config they were loaded with.
    pub config: Arc<Config>,
    /// Its definition as echoed ([`AgentVersion::definition`]).
    pub definition: serde_json::Value,
    /// `toolhost.toml`'s text, and a named agent's definition as stored:
    /// with the files, what it can be loaded again from.
    pub inputs: VersionInputs,
}

/// What committing a version did.
pub struct Committed {
    /// The agent's latest version now.
    pub version: Arc<AgentVersion>,
    /// What changed, when it is a new version after another.
    pub diff: Option<VersionDiff>,
    /// The version that was the latest until now.
    pub replaced: Option<Arc<AgentVersion>>,
}

/// Every agent's latest version and the older versions sessions still use.
pub struct Agents {
    root: PathBuf,
    stored: StoredAgents,
    blobs: Blobs,
    /// The fleet's records and definitions, when it shares them.
    shared: Option<Arc<FleetAgents>>,
    table: RwLock<Table>,
    /// Held while a version is committed, so two reloads cannot take one
    /// number.
    committing: Mutex<()>,
}

#[derive(Default)]
struct Table {
    latest: BTreeMap<String, Arc<AgentVersion>>,
    loaded: BTreeMap<AgentPin, Arc<AgentVersion>>,
}

impl Agents {
    /// Agents whose version records are kept under `<state_dir>/agents`.
    pub(crate) fn new(state_dir: &Path) -> Self {
        let root = state_dir.join(AGENTS_DIR);
        Self {
            stored: StoredAgents::new(&root, None),
            blobs: Blobs::new(&root),
            shared: None,
            root,
            table: RwLock::default(),
            committing: Mutex::new(()),
        }
    }

    /// Agents a fleet shares: definitions and version records in `store`,
    /// component files under `files_dir` (a folder every server mounts).
    pub(crate) fn shared(state_dir: &Path, store: Arc<RedisStore>, files_dir: &Path) -> Self {
        let shared = Arc::new(FleetAgents::new(store));
        let root = state_dir.join(AGENTS_DIR);
        Self {
            stored: StoredAgents::new(&root, Some(shared.clone())),
            blobs: Blobs::new(files_dir),
            shared: Some(shared),
            root,
            table: RwLock::default(),
            committing: Mutex::new(()),
        }
    }

    /// The agents with version records.
    fn recorded_agents(&self) -> anyhow::Result<Vec<String>> {
        if let Some(shared) = &self.shared {
            return shared.agents();
        }
        let mut names = crate::files::entry_names(&self.root)?;
        names.retain(|name| name != BLOBS_DIR);
        Ok(names)
    }

    /// Remove the component files no kept version's inputs name.
    fn collect_blobs(&self) {
        let agents = match self.recorded_agents() {
            Ok(agents) => agents,
            Err(e) => {
                tracing::warn!("not removing unused component files: {e:#}");
                return;
            }
        };
        let mut referenced = BTreeSet::new();
        for agent in agents {
            match self.shelf(&agent).referenced_files() {
                Ok(files) => referenced.extend(files),
                // Not knowing what is referenced, keep everything.
                Err(e) => {
                    tracing::warn!("not removing unused component files: {e:#}");
                    return;
                }
            }
        }
        let grace = self.shared.as_ref().map(|_| SHARED_BLOB_GRACE);
        self.blobs.collect(&referenced, grace);
    }

    /// What version `pin` was loaded from, and its record, if both are
    /// kept.
    pub(crate) fn kept(
        &self,
        pin: &AgentPin,
    ) -> anyhow::Result<Option<(VersionRecord, VersionInputs)>> {
        let shelf = self.shelf(&pin.name);
        let Some(record) = shelf.read(pin.version)? else {
            return Ok(None);
        };
        Ok(shelf
            .read_inputs(pin.version)?
            .map(|inputs| (record, inputs)))
    }

    /// Lay version `files` out in `dir` from the kept blobs.
    pub(crate) fn lay_out(
        &self,
        files: &BTreeMap<String, String>,
        dir: &Path,
    ) -> anyhow::Result<()> {
        self.blobs.lay_out(files, dir)
    }

    /// Add `version`, loaded again from what it was loaded from, to the
    /// loaded versions (not as its agent's latest).
    pub(crate) fn restore(&self, loaded: Loaded, record: VersionRecord) -> Arc<AgentVersion> {
        let version = Arc::new(AgentVersion {
            pin: AgentPin {
                name: record.agent.clone(),
                version: record.version,
            },
            registry: loaded.registry,
            config: loaded.config,
            definition: loaded.definition,
            record: Arc::new(record),
        });
        let mut table = self.table.write().unwrap_or_else(PoisonError::into_inner);
        table
            .loaded
            .entry(version.pin.clone())
            .or_insert(version)
            .clone()
    }

    /// The agents made over the API.
    pub(crate) fn stored(&self) -> &StoredAgents {
        &self.stored
    }

    fn shelf(&self, agent: &str) -> RecordShelf {
        RecordShelf::new(&self.root, agent, self.shared.clone())
    }

    /// Make `registry` (loaded with `config`) `agent`'s latest version: a
    /// new number when its tools differ from the newest recorded version,
    /// that version again (with this registry's load report) when they do
    /// not.
    pub(crate) fn commit(
        &self,
        agent: &str,
        loaded: Loaded,
        commit: Commit,
    ) -> anyhow::Result<Committed> {
        let Loaded {
            registry,
            config,
            definition,
            inputs,
        } = loaded;
        let _committing = self
            .committing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let shelf = self.shelf(agent);
        let newest = match self.latest(agent) {
            Some(latest) => Some(latest.record.clone()),
            // A one-shot command only shows the number: it does not need
            // the fleet's store to answer.
            None if commit == Commit::Unrecorded => shelf
                .newest()
                .unwrap_or_else(|e| {
                    tracing::warn!("the version shown is not the fleet's: {e:#}");
                    None
                })
                .map(Arc::new),
            None => shelf.newest()?.map(Arc::new),
        };
        let candidate = VersionRecord::of(agent, 0, &registry);
        let same = |newest: &VersionRecord| match commit {
            Commit::Recorded => newest.tools == candidate.tools,
            Commit::Unrecorded => candidate
                .tools
                .iter()
                .all(|(name, entry)| newest.tools.get(name) == Some(entry)),
        };
        let (record, diff) = match newest {
            Some(newest) if same(&newest) => (newest, None),
            newest if commit == Commit::Unrecorded => {
                let version = newest.map_or(0, |n| n.version) + 1;
                (
                    Arc::new(VersionRecord {
                        version,
                        ..candidate
                    }),
                    None,
                )
            }
            newest => {
                let number = shelf.number_for(&candidate, newest.as_deref())?;
                let diff = |newest: Option<Arc<VersionRecord>>, record: &VersionRecord| {
                    newest
                        .filter(|newest| newest.version != record.version)
                        .map(|newest| VersionDiff::between(&newest, record))
                };
                match shelf.read(number)? {
                    // Another server of the fleet recorded these tools.
                    Some(kept) if kept.tools == candidate.tools => {
                        self.blobs.keep(&registry)?;
                        let diff = diff(newest, &kept);
                        (Arc::new(kept), diff)
                    }
                    // The number the fleet's map gives these tools is
                    // another set's: the map (not sealed: it only
                    // numbers) was changed; nothing is labelled wrongly.
                    Some(_) => anyhow::bail!(
                        "the fleet numbers these tools of `{agent}` as version {number}, whose \
                         record holds other tools: its map of tool sets to numbers was changed"
                    ),
                    None => {
                        let record = VersionRecord {
                            version: number,
                            ..candidate
                        };
                        let diff = diff(newest, &record);
                        let in_use = self.loaded_numbers(agent);
                        let inputs = inputs.with_files_of(&registry);
                        self.blobs.keep(&registry)?;
                        shelf.write(&record, &inputs, |n| in_use.contains(&n))?;
                        self.collect_blobs();
                        (Arc::new(record), diff)
                    }
                }
            }
        };
        let version = Arc::new(AgentVersion {
            pin: AgentPin {
                name: agent.to_string(),
                version: record.version,
            },
            registry,
            config,
            definition,
            record,
        });
        let mut table = self.table.write().unwrap_or_else(PoisonError::into_inner);
        let replaced = table.latest.insert(agent.to_string(), Arc::clone(&version));
        table
            .loaded
            .insert(version.pin.clone(), Arc::clone(&version));
        Ok(Committed {
            version,
            diff,
            replaced,
        })
    }

    fn loaded_numbers(&self, agent: &str) -> HashSet<u64> {
        let table = self.table.read().unwrap_or_else(PoisonError::into_inner);
        table
            .loaded
            .keys()
            .filter(|pin| pin.name == agent)
            .map(|pin| pin.version)
            .collect()
    }

    /// `agent`'s latest version.
    pub(crate) fn latest(&self, agent: &str) -> Option<Arc<AgentVersion>> {
        let table = self.table.read().unwrap_or_else(PoisonError::into_inner);
        table.latest.get(agent).cloned()
    }

    /// The version `pin` names, if it is loaded.
    pub(crate) fn loaded(&self, pin: &AgentPin) -> Option<Arc<AgentVersion>> {
        let table = self.table.read().unwrap_or_else(PoisonError::into_inner);
        table.loaded.get(pin).cloned()
    }

    /// Stop serving `agent` (its definition is gone): no new session can
    /// be bound to it; versions sessions use stay loaded until released.
    pub(crate) fn retire(&self, agent: &str) {
        let mut table = self.table.write().unwrap_or_else(PoisonError::into_inner);
        table.latest.remove(agent);
    }

    /// The agents' names.
    pub(crate) fn names(&self) -> Vec<String> {
        let table = self.table.read().unwrap_or_else(PoisonError::into_inner);
        table.latest.keys().cloned().collect()
    }

    /// Drop every loaded version that is not its agent's latest and that
    /// `in_use` does not name: its code is freed once the calls running
    /// on it finish.
    pub(crate) fn release(&self, in_use: &HashSet<AgentPin>) {
        let dropped: Vec<Arc<AgentVersion>> = {
            let mut table = self.table.write().unwrap_or_else(PoisonError::into_inner);
            let latest: HashSet<AgentPin> = table.latest.values().map(|v| v.pin.clone()).collect();
            let keep = |pin: &AgentPin| latest.contains(pin) || in_use.contains(pin);
            let gone: Vec<AgentPin> = table.loaded.keys().filter(|p| !keep(p)).cloned().collect();
            gone.iter()
                .filter_map(|pin| table.loaded.remove(pin))
                .collect()
        };
        for version in &dropped {
            tracing::info!("unloaded {}: no session uses it", version.pin);
        }
    }

    /// The content digests of the components every loaded version runs.
    pub(crate) fn loaded_components(&self) -> std::collections::BTreeSet<String> {
        let table = self.table.read().unwrap_or_else(PoisonError::into_inner);
        table
            .loaded
            .values()
            .flat_map(|version| version.registry.all())
            .filter(|tool| tool.code_image().is_some())
            .map(|tool| tool.sha256().to_string())
            .collect()
    }

    /// The versions loaded now and the code they hold.
    pub(crate) fn loaded_versions(&self) -> LoadedVersions {
        let table = self.table.read().unwrap_or_else(PoisonError::into_inner);
        let mut images = BTreeMap::new();
        for version in table.loaded.values() {
            for tool in version.registry.all() {
                if let Some(image) = tool.code_image() {
                    images.insert(image.start, image.len());
                }
            }
        }
        LoadedVersions {
            versions: table
                .loaded
                .values()
                .map(|v| {
                    let latest = table
                        .latest
                        .get(&v.pin.name)
                        .is_some_and(|l| Arc::ptr_eq(l, v));
                    (v.pin.clone(), latest)
                })
                .collect(),
            components: images.len(),
            code_bytes: images.values().sum(),
        }
    }

    /// `agent`'s version records kept, lowest first; a record that cannot
    /// be read is reported and skipped.
    pub(crate) fn records(&self, agent: &str) -> anyhow::Result<Vec<VersionRecord>> {
        self.shelf(agent).all()
    }

    /// Run `work` (which reads or writes files, or waits for the fleet's
    /// store) on a blocking thread, off the async workers.
    pub(crate) async fn off_thread<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&Self) -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<T> {
        let agents = Arc::clone(self);
        tokio::task::spawn_blocking(move || work(&agents))
            .await
            .context("the agents' store task panicked")?
    }

    /// Version `version` of `agent` as recorded, if it is kept.
    pub(crate) fn record(
        &self,
        agent: &str,
        version: u64,
    ) -> anyhow::Result<Option<VersionRecord>> {
        if let Some(loaded) = self.loaded(&AgentPin {
            name: agent.to_string(),
            version,
        }) {
            return Ok(Some(loaded.record.as_ref().clone()));
        }
        self.shelf(agent).read(version)
    }
}
