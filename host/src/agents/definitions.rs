//! Agents made over the HTTP API, kept as `<state>/agents/<name>/agent.json`
//! (or, for a fleet, in Redis) so they outlive the process (agents
//! `toolhost.toml` declares are read from it instead).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;

use super::fleet::FleetAgents;
use super::stored::StoredAgent;

/// The file an agent made over the API is kept in, under its folder.
pub const DEFINITION_FILE: &str = "agent.json";

/// Where agents made over the API are kept.
pub(crate) struct StoredAgents {
    root: PathBuf,
    /// The fleet's, when it shares them.
    shared: Option<Arc<FleetAgents>>,
}

impl StoredAgents {
    /// Kept under `root` (`<state>/agents`), or in `shared`.
    pub(crate) fn new(root: &Path, shared: Option<Arc<FleetAgents>>) -> Self {
        Self {
            root: root.to_path_buf(),
            shared,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name).join(DEFINITION_FILE)
    }

    /// Every agent kept; one that cannot be read is reported and skipped.
    /// An error when the list itself cannot be read (the fleet's store
    /// does not answer): the caller must not take it for "none".
    pub(crate) fn all(&self) -> anyhow::Result<Vec<StoredAgent>> {
        if let Some(shared) = &self.shared {
            return shared.definitions();
        }
        let mut agents = Vec::new();
        for name in crate::files::entry_names(&self.root)? {
            match self.read(&name) {
                Ok(Some(agent)) => agents.push(agent),
                Ok(None) => {}
                Err(e) => tracing::warn!("skipping the agent `{name}`: {e:#}"),
            }
        }
        agents.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(agents)
    }

    /// The agent `name`, if one is kept.
    pub(crate) fn read(&self, name: &str) -> anyhow::Result<Option<StoredAgent>> {
        if let Some(shared) = &self.shared {
            return shared.definition(name);
        }
        let path = self.path(name);
        let Some(agent) = crate::files::read_json::<StoredAgent>(&path, "an agent definition")?
        else {
            return Ok(None);
        };
        anyhow::ensure!(
            agent.name == name,
            "{} holds the agent `{}`, not `{name}`",
            path.display(),
            agent.name
        );
        Ok(Some(agent))
    }

    /// Forget the agent `name` (its versions' records stay).
    pub(crate) fn remove(&self, name: &str) -> anyhow::Result<()> {
        if let Some(shared) = &self.shared {
            return shared.forget_definition(name);
        }
        match crate::files::remove_durably(&self.path(name)) {
            Ok(_) => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot remove the agent `{name}`")),
        }
    }

    /// Keep `agent`, replacing what was kept under its name.
    pub(crate) fn write(&self, agent: &StoredAgent) -> anyhow::Result<()> {
        if let Some(shared) = &self.shared {
            return shared.keep_definition(agent);
        }
        let dir = self.root.join(&agent.name);
        crate::files::create_private_dir(&dir)?;
        crate::files::write_atomically(&self.path(&agent.name), &serde_json::to_vec_pretty(agent)?)
    }
}
