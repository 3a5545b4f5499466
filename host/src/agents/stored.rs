//! Agents made over the HTTP API, kept as `<state>/agents/<name>/agent.json`
//! (or, for a fleet, in Redis) so they outlive the process (agents
//! `toolhost.toml` declares are read from it instead).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shared::SharedAgents;
use crate::config::agent::AgentSpec;

/// The file an agent made over the API is kept in, under its folder.
pub const DEFINITION_FILE: &str = "agent.json";

/// An agent made over the API, as kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredAgent {
    /// Its name.
    pub name: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When its definition last changed.
    pub updated_at: DateTime<Utc>,
    /// Its definition ([`AgentSpec::to_stored_json`]).
    pub definition: Value,
}

impl StoredAgent {
    /// Its definition, parsed and checked again.
    pub fn spec(&self) -> anyhow::Result<AgentSpec> {
        match &self.definition {
            Value::Object(body) => AgentSpec::from_json(body),
            _ => anyhow::bail!("the definition is not a JSON object"),
        }
    }
}

/// Where agents made over the API are kept.
pub(crate) struct StoredAgents {
    root: PathBuf,
    /// The fleet's, when it shares them.
    shared: Option<Arc<SharedAgents>>,
}

impl StoredAgents {
    /// Kept under `root` (`<state>/agents`), or in `shared`.
    pub(crate) fn new(root: &Path, shared: Option<Arc<SharedAgents>>) -> Self {
        Self {
            root: root.to_path_buf(),
            shared,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name).join(DEFINITION_FILE)
    }

    /// Every agent kept; one that cannot be read is reported and skipped.
    pub(crate) fn all(&self) -> Vec<StoredAgent> {
        if let Some(shared) = &self.shared {
            return shared.definitions().unwrap_or_else(|e| {
                tracing::warn!("{e:#}");
                Vec::new()
            });
        }
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                tracing::warn!("cannot list {}: {e}", self.root.display());
                return Vec::new();
            }
        };
        let mut agents = Vec::new();
        for entry in entries.flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            match self.read(&name) {
                Ok(Some(agent)) => agents.push(agent),
                Ok(None) => {}
                Err(e) => tracing::warn!("skipping the agent `{name}`: {e:#}"),
            }
        }
        agents.sort_by(|a, b| a.name.cmp(&b.name));
        agents
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
