//! Versions loaded again after a restart, or on another server of a
//! fleet, for the sessions bound to them: from what each was loaded from
//! (`crate::agents::VersionInputs`), its component files laid out from the
//! blobs kept by digest, and checked against its record before a call may
//! run it.
//!
//! What was kept is not obeyed as configuration: the secrets its
//! `toolhost.toml` text held come from this server's own; it may declare
//! no MCP server this server's `toolhost.toml` does not declare the same
//! way (so no process is started, and no server added or changed, that
//! this server's operator did not name); an agent made over the API is held
//! to the API's rules again (no process, no static header values); and this
//! server's `tools.lock` applies.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::Context as _;

use super::Host;
use crate::agents::{AgentPin, AgentVersion, Loaded, VersionDiff, VersionInputs};
use crate::config::agent::AgentSpec;
use crate::config::mcp::McpServer;
use crate::config::{CONFIG_FILE, Config, redacted};
use crate::sandbox::engine::Pins;
use crate::sandbox::engine::Tiering;
use crate::tools::registry::{LoadOptions, Registry, Scope};

/// The folder, under an agent's, where restored versions' files are laid out.
const RESTORED_DIR: &str = "restored";

impl Host {
    /// Load again every version a session of the attached store is bound
    /// to that is not loaded (the host restarted since its tools changed).
    /// A version that cannot be (its inputs were not kept, a component file
    /// is gone, or its tools no longer match its record) stays unloaded:
    /// its sessions' calls are refused `agent_version_unavailable` until
    /// they are upgraded.
    pub async fn restore_pinned_versions(&self) {
        let pins: BTreeSet<AgentPin> = self
            .sessions()
            .map(|store| store.pins().into_iter().collect())
            .unwrap_or_default();
        for pin in pins {
            if self.is_loaded(&pin) {
                continue;
            }
            match self.restore(&pin).await {
                Ok(_) => tracing::info!("loaded {pin} again: a session is bound to it"),
                Err(e) => tracing::warn!(
                    "{pin} cannot be loaded again; its sessions must be upgraded: {e:#}"
                ),
            }
        }
    }

    /// Load version `pin` again from its kept inputs.
    pub(super) async fn restore(&self, pin: &AgentPin) -> anyhow::Result<Arc<AgentVersion>> {
        let dir = self
            .state_dir()
            .join(crate::agents::AGENTS_DIR)
            .join(&pin.name)
            .join(RESTORED_DIR)
            .join(pin.version.to_string());
        let tools_dir = dir.join("tools");
        let (kept_pin, laid_out) = (pin.clone(), tools_dir.clone());
        let (record, inputs) = self
            .agents
            .off_thread(move |agents| {
                let (record, inputs) = agents
                    .kept(&kept_pin)?
                    .context("what it was loaded from was not kept")?;
                agents.lay_out(&inputs.files, &laid_out)?;
                Ok((record, inputs))
            })
            .await?;
        let VersionInputs {
            config: config_text,
            definition,
            files: _,
        } = inputs;
        let own = self.config();
        let base = match &config_text {
            Some(text) => {
                let whole = redacted::restore(text, self.config_text().as_deref())?;
                Config::parse(&whole, &self.source.dir.join(CONFIG_FILE))?
            }
            None => Config::clone(&own),
        };
        anyhow::ensure!(
            base.mcp_servers == own.mcp_servers,
            "it declares MCP servers ({}) other than this server's toolhost.toml does ({}): \
             no server is started or changed from what was kept",
            names(&base.mcp_servers),
            names(&own.mcp_servers)
        );
        let spec = match &definition {
            Some(stored) => Some(self.restored_definition(&pin.name, stored)?),
            None => None,
        };
        let config = match &spec {
            Some(spec) => base.for_agent(spec),
            None => base,
        };
        let scope = match &spec {
            Some(spec) => Scope::Agent(&spec.components),
            None => Scope::Everything,
        };
        let lock = super::read_lock(&self.source.dir, self.source.ignore_lock)?;
        let options = LoadOptions {
            tiering: Tiering::BaselineFirst,
            pins: lock.as_ref().map(|lock| lock as &dyn Pins),
            scope,
            upstreams: Some(&self.upstreams),
            ..LoadOptions::new(&tools_dir, &config)
        };
        let mut registry = Registry::load_with(&self.engine, options).await?;
        if let Some(lock) = &lock {
            match &spec {
                Some(_) => lock.enforce_files(&mut registry),
                None => lock.enforce(&mut registry),
            }
        }
        let now = crate::agents::VersionRecord::of(&pin.name, pin.version, &registry);
        let changes = VersionDiff::between(&record, &now);
        anyhow::ensure!(
            changes.is_empty(),
            "its tools no longer match its record (added {:?}, removed {:?}, changed {:?})",
            changes.added,
            changes.removed,
            changes.changed
        );
        let definition = match &spec {
            Some(spec) => spec.to_json(),
            None => config.definition(),
        };
        let loaded = Loaded {
            registry: Arc::new(registry),
            config: Arc::new(config),
            definition,
            inputs: VersionInputs::default(),
        };
        Ok(self.agents.restore(loaded, record))
    }

    /// A named agent's kept definition, as this server may load it: an
    /// agent its `toolhost.toml` declares gets its secrets from there, and
    /// its MCP servers must be the ones declared there; any other agent
    /// was made over the API and is held to the API's rules.
    fn restored_definition(
        &self,
        name: &str,
        stored: &serde_json::Value,
    ) -> anyhow::Result<AgentSpec> {
        let config = self.config();
        let declared = config.agents.get(name);
        let whole =
            redacted::restore_definition(stored, declared.map(AgentSpec::to_stored_json).as_ref())?;
        let serde_json::Value::Object(body) = whole else {
            anyhow::bail!("its definition is not a JSON object");
        };
        match declared {
            Some(own) => {
                let spec = AgentSpec::from_stored(&body)?;
                anyhow::ensure!(
                    spec.mcp_servers == own.mcp_servers,
                    "it declares MCP servers ({}) other than [agents.{name}] in this server's \
                     toolhost.toml does ({})",
                    names(&spec.mcp_servers),
                    names(&own.mcp_servers)
                );
                Ok(spec)
            }
            None => AgentSpec::from_json(&body, &config.server.agent_mcp_servers()),
        }
    }
}

/// The names of `servers`, for a message.
fn names(servers: &[McpServer]) -> String {
    match servers {
        [] => "none".to_string(),
        servers => servers
            .iter()
            .map(|s| format!("`{}`", s.name))
            .collect::<Vec<_>>()
            .join(", "),
    }
}
