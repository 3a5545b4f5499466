//! Named agents: each one's tools loaded beside the default agent's, from
//! `[agents.<name>]` in `toolhost.toml` or from an agent made over the HTTP
//! API, and making and changing the latter.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::{Host, read_lock};
use crate::agents::{
    AgentError, AgentVersion, Committed, DEFAULT_AGENT, Loaded, StoredAgent, VersionInputs,
};
use crate::config::agent::AgentSpec;
use crate::config::{Config, check_agent_name, redacted};
use crate::sandbox::engine::{Pins, Tiering};
use crate::sandbox::tiering;
use crate::tools::registry::{LoadFailure, LoadOptions, Registry, Scope};

/// Where a named agent's definition comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentSource {
    /// `[agents.<name>]` in `toolhost.toml`.
    Config,
    /// `POST /<slug>/v1/agents`.
    Api,
}

impl Host {
    /// Every named agent's definition: `toolhost.toml`'s, then those made
    /// over the API (a name both have is the file's; the other is reported).
    /// Whether the list is whole is `false` when the agents made over the
    /// API could not be read (the fleet's store does not answer).
    async fn named_definitions(
        &self,
        config: &Config,
    ) -> (BTreeMap<String, (AgentSpec, AgentSource)>, bool) {
        let mut named: BTreeMap<String, (AgentSpec, AgentSource)> = config
            .agents
            .iter()
            .map(|(name, spec)| (name.clone(), (spec.clone(), AgentSource::Config)))
            .collect();
        let allowed = config.server.agent_mcp_servers();
        let stored = match self.agents.off_thread(|agents| agents.stored().all()).await {
            Ok(stored) => stored,
            Err(e) => {
                tracing::error!("the agents made over the API cannot be read: {e:#}");
                return (named, false);
            }
        };
        for stored in stored {
            if named.contains_key(&stored.name) {
                tracing::warn!(
                    "toolhost.toml declares the agent `{}`, which was also made over the API; \
                     the file's definition is served",
                    stored.name
                );
                continue;
            }
            if let Err(e) = check_agent_name(&stored.name) {
                tracing::error!("not serving an agent kept under that name: {e:#}");
                continue;
            }
            match stored.spec(&allowed).and_then(|spec| {
                check_servers(config, &named, &stored.name, &spec)?;
                Ok(spec)
            }) {
                Ok(spec) => {
                    named.insert(stored.name.clone(), (spec, AgentSource::Api));
                }
                Err(e) => tracing::error!(
                    "the agent `{}` made over the API is not served: {e:#}",
                    stored.name
                ),
            }
        }
        (named, true)
    }

    /// Where the agent `name`'s definition comes from, if it is a named
    /// agent this host serves.
    pub fn agent_source(&self, name: &str) -> Option<AgentSource> {
        if self.config().agents.contains_key(name) {
            Some(AgentSource::Config)
        } else if name != DEFAULT_AGENT && self.agents.latest(name).is_some() {
            // A named agent not in the file was made over the API.
            Some(AgentSource::Api)
        } else {
            None
        }
    }

    /// The agent `name` made over the API as kept, if there is one (read
    /// off the async workers: in a fleet it is in Redis).
    async fn kept_agent(&self, name: &str) -> Result<Option<StoredAgent>, AgentError> {
        let name = name.to_string();
        Ok(self
            .agents
            .off_thread(move |agents| agents.stored().read(&name))
            .await?)
    }

    /// Load `spec`'s tools with `config`'s settings and grants. Folder
    /// files are shared with the default agent's latest version (loaded
    /// once, same code) and held to `tools.lock`.
    async fn load_named(
        &self,
        spec: &AgentSpec,
        config: &Config,
        tiering: Tiering,
    ) -> anyhow::Result<Loaded> {
        let derived = config.for_agent(spec);
        let lock = read_lock(&self.source.dir, self.source.ignore_lock)?;
        let shared = self.registry();
        let options = LoadOptions {
            previous: Some(&shared),
            tiering,
            pins: lock.as_ref().map(|lock| lock as &dyn Pins),
            scope: Scope::Agent(&spec.components),
            upstreams: Some(&self.upstreams),
            ..LoadOptions::new(&self.source.tools_dir, &derived)
        };
        let mut registry = Registry::load_with(&self.engine, options).await?;
        tiering::spawn(self.engine.clone(), registry.take_upgrades());
        if let Some(lock) = &lock {
            lock.enforce_files(&mut registry);
        }
        Ok(Loaded {
            registry: Arc::new(registry),
            config: Arc::new(derived),
            definition: spec.to_json(),
            inputs: VersionInputs {
                config: self
                    .config_text()
                    .as_deref()
                    .map(redacted::redact)
                    .transpose()?,
                definition: Some(redacted::redact_definition(&spec.to_stored_json())),
                ..VersionInputs::default()
            },
        })
    }

    /// Load every named agent and make each one's tools its latest
    /// version. One that fails to load keeps the version it had (the
    /// failure is logged); agents no longer defined are retired, and MCP
    /// servers no agent declares any more are stopped.
    /// The caller holds `editing`.
    pub(super) async fn load_named_agents(&self, config: &Config, tiering: Tiering) {
        let (named, whole) = self.named_definitions(config).await;
        for (name, (spec, _)) in &named {
            let committed = match self.load_named(spec, config, tiering).await {
                // One that had a version keeps it rather than lose a tool.
                Ok(loaded)
                    if !loaded.registry.failures().is_empty()
                        && self.agents.latest(name).is_some() =>
                {
                    Err(anyhow::anyhow!(
                        "{}",
                        failure_list(loaded.registry.failures())
                    ))
                }
                Ok(loaded) => {
                    let (name, commit) = (name.clone(), self.commit);
                    self.agents
                        .off_thread(move |agents| agents.commit(&name, loaded, commit))
                        .await
                }
                Err(e) => Err(e),
            };
            match committed {
                Ok(committed) => self.announce(name, &committed),
                Err(e) => tracing::error!(
                    "agent `{name}` did not load; it keeps the version it had: {e:#}"
                ),
            }
        }
        if !whole {
            // Not knowing which agents are defined, retire none.
            return;
        }
        for name in self.agents.names() {
            if name != DEFAULT_AGENT && !named.contains_key(&name) {
                tracing::info!("agent `{name}` is no longer defined: no new session can use it");
                self.agents.retire(&name);
            }
        }
        let servers: BTreeSet<String> = (config.mcp_servers.iter())
            .chain(named.values().flat_map(|(spec, _)| &spec.mcp_servers))
            .map(|server| server.name.clone())
            .collect();
        self.upstreams.retain(&servers);
    }

    /// Make the agent `name` from `body` (the registry's JSON shape:
    /// `tools`, `mcp_servers`, `components`), kept across restarts, and
    /// give it version 1.
    pub async fn create_agent(
        &self,
        name: &str,
        body: &Map<String, Value>,
    ) -> Result<Arc<AgentVersion>, AgentError> {
        check_agent_name(name).map_err(|e| invalid(name, &e))?;
        let _editing = self.editing.lock().await;
        if self.agent_source(name).is_some() || self.kept_agent(name).await?.is_some() {
            return Err(AgentError::Exists {
                name: name.to_string(),
            });
        }
        let config = self.config();
        let spec = AgentSpec::from_json(body, &config.server.agent_mcp_servers())
            .map_err(|e| invalid(name, &e))?;
        let (others, _) = self.named_definitions(&config).await;
        if others.len() >= MAX_NAMED_AGENTS {
            return Err(AgentError::Invalid {
                name: name.to_string(),
                reason: format!(
                    "this host serves {MAX_NAMED_AGENTS} named agents already, the most it serves"
                ),
            });
        }
        check_servers(&config, &others, name, &spec).map_err(|e| invalid(name, &e))?;
        Ok(self.commit_api_agent(name, &spec, None).await?.version)
    }

    /// Change the agent `name`, made over the API: the keys of `patch`
    /// (`tools`, `mcp_servers`, `components`) replace its definition's. A
    /// change to its tools makes a new version; sessions keep theirs.
    pub async fn update_agent(
        &self,
        name: &str,
        patch: &Map<String, Value>,
    ) -> Result<Committed, AgentError> {
        if name != DEFAULT_AGENT {
            check_agent_name(name).map_err(|e| invalid(name, &e))?;
        }
        let _editing = self.editing.lock().await;
        let kept = match name {
            DEFAULT_AGENT => None,
            _ if self.config().agents.contains_key(name) => None,
            _ => self.kept_agent(name).await?,
        };
        let stored = match kept {
            Some(stored) => stored,
            None if name == DEFAULT_AGENT || self.agent_source(name).is_some() => {
                return Err(not_editable(name));
            }
            None => return Err(self.agent(name).err().unwrap_or_else(|| not_editable(name))),
        };
        let mut body = match stored.definition {
            Value::Object(body) => body,
            _ => Map::new(),
        };
        for (key, value) in patch {
            body.insert(key.clone(), value.clone());
        }
        let config = self.config();
        let spec = AgentSpec::from_json(&body, &config.server.agent_mcp_servers())
            .map_err(|e| invalid(name, &e))?;
        check_servers(
            &config,
            &self.named_definitions(&config).await.0,
            name,
            &spec,
        )
        .map_err(|e| invalid(name, &e))?;
        let committed = self
            .commit_api_agent(name, &spec, Some(stored.created_at))
            .await?;
        self.release_versions();
        Ok(committed)
    }

    /// Load `spec`'s tools (every one must load), keep the definition and
    /// commit the tools as `name`'s latest version.
    async fn commit_api_agent(
        &self,
        name: &str,
        spec: &AgentSpec,
        created_at: Option<DateTime<Utc>>,
    ) -> Result<Committed, AgentError> {
        let config = self.config();
        let loaded = self
            .load_named(spec, &config, Tiering::BaselineFirst)
            .await
            .map_err(|e| invalid(name, &e))?;
        if !loaded.registry.failures().is_empty() {
            return Err(AgentError::Invalid {
                name: name.to_string(),
                reason: failure_list(loaded.registry.failures()),
            });
        }
        let now = Utc::now();
        let stored = StoredAgent {
            name: name.to_string(),
            created_at: created_at.unwrap_or(now),
            updated_at: now,
            definition: spec.to_stored_json(),
        };
        let commit = self.commit;
        let committed = self
            .agents
            .off_thread(move |agents| {
                let name = stored.name.clone();
                let before = agents.stored().read(&name)?;
                agents.stored().write(&stored)?;
                agents.commit(&name, loaded, commit).inspect_err(|_| {
                    // Not served, so not kept: the definition before stands.
                    let undone = match &before {
                        Some(before) => agents.stored().write(before),
                        None => agents.stored().remove(&name),
                    };
                    if let Err(undo) = undone {
                        tracing::error!("agent `{name}`: {undo:#}");
                    }
                })
            })
            .await?;
        self.announce(name, &committed);
        self.tell_fleet_agents_changed().await;
        Ok(committed)
    }
}

/// The most named agents a host serves.
pub const MAX_NAMED_AGENTS: usize = 256;

/// Check `spec`'s MCP servers (the agent `name`'s) with those the default
/// agent and the `others` declare: one connection per server name.
fn check_servers(
    config: &Config,
    others: &BTreeMap<String, (AgentSpec, AgentSource)>,
    name: &str,
    spec: &AgentSpec,
) -> anyhow::Result<()> {
    let servers =
        (config.mcp_servers.iter())
            .map(|s| ("the default agent".to_string(), s))
            .chain(others.iter().filter(|(other, _)| *other != name).flat_map(
                |(other, (spec, _))| {
                    spec.mcp_servers
                        .iter()
                        .map(move |s| (format!("agent `{other}`"), s))
                },
            ))
            .chain(
                spec.mcp_servers
                    .iter()
                    .map(|s| (format!("agent `{name}`"), s)),
            );
    crate::config::mcp::check_shared(servers)
}

/// Why tools did not load, one after the other.
fn failure_list(failures: &[LoadFailure]) -> String {
    let reasons: Vec<String> = failures
        .iter()
        .map(|failure| match &failure.tool {
            Some(tool) => format!("`{tool}`: {}", failure.reason),
            None => failure.reason.clone(),
        })
        .collect();
    reasons.join("; ")
}

fn invalid(name: &str, error: &anyhow::Error) -> AgentError {
    AgentError::Invalid {
        name: name.to_string(),
        reason: format!("{error:#}"),
    }
}

fn not_editable(name: &str) -> AgentError {
    AgentError::NotEditable {
        name: name.to_string(),
    }
}

impl Host {
    /// Log what a commit of `agent` changed and, for a named agent, tell
    /// the subscribers of [`Host::tool_changes`] (a reload announces the
    /// default agent's changes itself), when it made a new version after
    /// another, or is the first this server holds of an agent past its
    /// first version (another server made the ones before, which a client
    /// may have listed there).
    pub(super) fn announce(&self, agent: &str, committed: &Committed) {
        let first_heard_later = committed.replaced.is_none() && committed.version.pin().version > 1;
        if first_heard_later && agent != DEFAULT_AGENT {
            tracing::info!(
                "agent `{agent}` is at version {} here, its earlier versions made elsewhere",
                committed.version.pin().version
            );
            self.tool_changes.send_modify(|n| *n += 1);
        }
        if let Some(diff) = &committed.diff {
            tracing::info!(
                "agent `{agent}` is now at version {} (added {:?}, removed {:?}, changed {:?})",
                diff.to,
                diff.added,
                diff.removed,
                diff.changed.keys().collect::<Vec<_>>()
            );
            if agent != DEFAULT_AGENT {
                self.tool_changes.send_modify(|n| *n += 1);
            }
        }
    }
}
