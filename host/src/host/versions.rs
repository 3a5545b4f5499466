//! The host's agents and versions as surfaces use them: which version a
//! session's call runs, binding a new session, upgrading one, and dropping
//! the versions no session uses.

use std::sync::Arc;

use anyhow::Context as _;

use super::Host;
use super::fleet::Fleet;
use crate::agent_tools::WrittenScript;
use crate::agents::{
    AgentError, AgentVersion, DEFAULT_AGENT, LoadedVersions, VersionDiff, VersionRecord,
};
use crate::error::CallError;
use crate::sandbox::engine::Tiering;
use crate::session::{AgentPin, Session, SessionStore};

impl Host {
    /// The version a call in `session` runs: the one it is bound to, or
    /// the default agent's latest for a session bound to none.
    pub fn version_of(&self, session: &Session) -> Result<Arc<AgentVersion>, CallError> {
        let Some(pin) = session.pin() else {
            return Ok(self.latest());
        };
        self.agents
            .loaded(&pin)
            .ok_or_else(|| CallError::VersionUnavailable {
                session: session.id().to_string(),
                latest: self.agents.latest(&pin.name).map_or(0, |v| v.pin().version),
                pin,
            })
    }

    /// [`Host::version_of`], loading the version from the fleet's records
    /// when another server made it (a session created there, after a
    /// change this server has not seen yet).
    pub async fn version_for(&self, session: &Session) -> Result<Arc<AgentVersion>, CallError> {
        let unavailable = match self.version_of(session) {
            Err(unavailable @ CallError::VersionUnavailable { .. }) if self.fleet.is_some() => {
                unavailable
            }
            other => return other,
        };
        let Some(pin) = session.pin() else {
            return Err(unavailable);
        };
        self.load_from_fleet(&pin).await.ok_or(unavailable)
    }

    /// Version `pin`, loaded here from the fleet's records unless it is
    /// loaded already (one at a time); `None`, logged, when it cannot be
    /// (then not tried again for a while: each try compiles its tools).
    async fn load_from_fleet(&self, pin: &AgentPin) -> Option<Arc<AgentVersion>> {
        let fleet = self.fleet.as_ref()?;
        let _restoring = fleet.restoring.lock().await;
        if let Some(version) = self.agents.loaded(pin) {
            return Some(version);
        }
        let key = pin.to_string();
        if fleet.failed_loads.failed_lately(&key) {
            return None;
        }
        match self.restore(pin).await {
            Ok(version) => {
                tracing::info!("loaded {pin} from the fleet's records: a session is bound to it");
                Some(version)
            }
            Err(e) => {
                tracing::warn!("{pin} cannot be loaded from the fleet's records: {e:#}");
                fleet.failed_loads.failed(key);
                None
            }
        }
    }

    /// The agents this host serves.
    pub fn agent_names(&self) -> Vec<String> {
        self.agents.names()
    }

    /// `agent`'s latest version.
    pub fn agent(&self, agent: &str) -> Result<Arc<AgentVersion>, AgentError> {
        self.agents
            .latest(agent)
            .ok_or_else(|| AgentError::UnknownAgent {
                name: agent.to_string(),
                known: self.agents.names(),
            })
    }

    /// What a new session is bound to: version `version` of `agent` (the
    /// default agent, its latest version, when not named), which must be
    /// loaded. In a fleet, an agent or version another server made since
    /// this one loaded its agents is loaded first.
    pub async fn pin_for(
        &self,
        agent: Option<&str>,
        version: Option<u64>,
    ) -> Result<AgentPin, AgentError> {
        if let Some(fleet) = &self.fleet {
            self.catch_up(fleet, agent.unwrap_or(DEFAULT_AGENT), version)
                .await?;
        }
        Ok(self.resolve(agent, version).await?.pin().clone())
    }

    /// Load the agent `agent` if the fleet keeps a definition of it this
    /// server does not serve yet, and its version `version` if the fleet
    /// recorded it and it is not loaded here. What cannot be loaded is
    /// logged (and not tried again for a while); the caller's lookup then
    /// says what is missing. An error when the fleet's store does not
    /// answer.
    async fn catch_up(
        &self,
        fleet: &Fleet,
        agent: &str,
        version: Option<u64>,
    ) -> Result<(), AgentError> {
        let key = format!("agent `{agent}`");
        if self.agents.latest(agent).is_none() && !fleet.failed_loads.failed_lately(&key) {
            let name = agent.to_string();
            let defined = self
                .agents
                .off_thread(move |agents| agents.stored().read(&name))
                .await?
                .is_some();
            if defined {
                let _editing = self.editing.lock().await;
                if self.agents.latest(agent).is_none() {
                    tracing::info!("serving the agent `{agent}`, made on another server");
                    let config = self.config();
                    self.load_named_agents(&config, Tiering::BaselineFirst)
                        .await;
                    if self.agents.latest(agent).is_none() {
                        fleet.failed_loads.failed(key);
                    }
                }
            }
        }
        let Some(version) = version else {
            return Ok(());
        };
        let pin = AgentPin {
            name: agent.to_string(),
            version,
        };
        if self.agents.latest(agent).is_some()
            && self.agents.loaded(&pin).is_none()
            && self.recorded(agent, version).await?.is_some()
        {
            self.load_from_fleet(&pin).await;
        }
        Ok(())
    }

    /// Version `version` of `agent` as recorded, if it is kept (read off
    /// the async workers when it is not loaded).
    async fn recorded(&self, agent: &str, version: u64) -> anyhow::Result<Option<VersionRecord>> {
        let agent = agent.to_string();
        self.agents
            .off_thread(move |agents| agents.record(&agent, version))
            .await
    }

    /// Version `version` of `agent` (the default agent, its latest
    /// version, when not named), which must be loaded.
    pub async fn resolve(
        &self,
        agent: Option<&str>,
        version: Option<u64>,
    ) -> Result<Arc<AgentVersion>, AgentError> {
        let latest = self.agent(agent.unwrap_or(DEFAULT_AGENT))?;
        match version.filter(|&v| v != latest.pin().version) {
            Some(version) => self.loaded_version(&latest, version).await,
            None => Ok(latest),
        }
    }

    async fn loaded_version(
        &self,
        latest: &AgentVersion,
        version: u64,
    ) -> Result<Arc<AgentVersion>, AgentError> {
        let agent = &latest.pin().name;
        let pin = AgentPin {
            name: agent.clone(),
            version,
        };
        if let Some(loaded) = self.agents.loaded(&pin) {
            return Ok(loaded);
        }
        let latest = latest.pin().version;
        match self.recorded(agent, version).await? {
            Some(_) => Err(AgentError::VersionNotLoaded {
                agent: agent.clone(),
                version,
                latest,
            }),
            None => Err(AgentError::VersionNotFound {
                agent: agent.clone(),
                version,
                latest,
            }),
        }
    }

    /// Bind `session` (of `store`) to version `to` of its agent (the
    /// latest when `None`), from its next call on, and say what changed.
    pub async fn upgrade(
        &self,
        store: &SessionStore,
        session: &Session,
        to: Option<u64>,
    ) -> Result<VersionDiff, AgentError> {
        let from = session.pin();
        let agent = from.as_ref().map_or(DEFAULT_AGENT, |p| p.name.as_str());
        let latest = self.agent(agent)?;
        let target = match to {
            Some(version) if version != latest.pin().version => {
                self.loaded_version(&latest, version).await?
            }
            _ => latest,
        };
        let before = match &from {
            Some(pin) => self.recorded(&pin.name, pin.version).await?,
            None => None,
        };
        let diff = match before {
            Some(before) => VersionDiff::between(&before, target.record()),
            // Bound to nothing, or to a version whose record is gone:
            // everything counts as added.
            None => VersionDiff::between(
                &VersionRecord {
                    version: from.map_or(0, |p| p.version),
                    tools: Default::default(),
                    ..target.record().clone()
                },
                target.record(),
            ),
        };
        store.repin(session, target.pin().clone()).await?;
        self.release_versions();
        Ok(diff)
    }

    /// `agent`'s versions on record, lowest first.
    pub fn agent_versions(&self, agent: &str) -> Result<Vec<VersionRecord>, AgentError> {
        self.agent(agent)?;
        Ok(self.agents.records(agent)?)
    }

    /// Version `version` of `agent` as recorded.
    pub async fn agent_version(
        &self,
        agent: &str,
        version: u64,
    ) -> Result<VersionRecord, AgentError> {
        let latest = self.agent(agent)?;
        self.recorded(agent, version)
            .await?
            .ok_or_else(|| AgentError::VersionNotFound {
                agent: agent.to_string(),
                version,
                latest: latest.pin().version,
            })
    }

    /// Write the agent-execution tools of `session`'s version into its
    /// workspace (see [`crate::agent_tools`]) and say what is there.
    pub fn write_agent_tools(&self, session: &Session) -> anyhow::Result<Vec<WrittenScript>> {
        let version = self.version_of(session)?;
        let registry = version.registry();
        let has_scripts = registry.tools().any(|t| t.agent_script().is_some());
        // No workspace is made for a version without scripts; one that
        // exists has the scripts of an earlier version cleared.
        let workspace = match (has_scripts, session.workspace_path()) {
            (false, None) => return Ok(Vec::new()),
            (false, Some(path)) => path,
            (true, _) => session
                .workspace()
                .context("the session's workspace cannot be created")?,
        };
        crate::agent_tools::write_into(workspace, registry)
    }

    /// Whether version `pin` is loaded now.
    pub fn is_loaded(&self, pin: &AgentPin) -> bool {
        self.agents.loaded(pin).is_some()
    }

    /// The versions loaded now and the code they hold (for `/metrics`).
    pub fn loaded_versions(&self) -> LoadedVersions {
        self.agents.loaded_versions()
    }

    /// Drop every version that is not its agent's latest and that no
    /// session of the attached store is bound to. Surfaces call it when a
    /// session ends; reloads and upgrades call it themselves.
    pub fn release_versions(&self) {
        let in_use = self
            .sessions()
            .map(|store| store.pins())
            .unwrap_or_default();
        self.agents.release(&in_use);
    }
}
