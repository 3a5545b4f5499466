//! Versions loaded again after a restart, for the sessions still bound to
//! them: from what each was loaded from (`crate::agents::VersionInputs`),
//! its component files laid out from the blobs kept by digest, and checked
//! against its record before a call may run it.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::Context as _;

use super::Host;
use crate::agents::{AgentPin, AgentVersion, Loaded, VersionDiff, VersionInputs};
use crate::config::agent::AgentSpec;
use crate::config::{CONFIG_FILE, Config};
use crate::engine::Tiering;
use crate::registry::{Registry, Scope};

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
        let base = match &config_text {
            Some(text) => Config::parse(text, &self.dir.join(CONFIG_FILE))?,
            None => Config::clone(&self.config()),
        };
        let spec = match &definition {
            Some(serde_json::Value::Object(body)) => Some(AgentSpec::from_stored(body)?),
            Some(_) => anyhow::bail!("its definition is not a JSON object"),
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
        let registry = Registry::load_tiered(
            &self.engine,
            &tools_dir,
            &config,
            None,
            Tiering::BaselineFirst,
            None,
            scope,
            Some(&self.upstreams),
        )
        .await?;
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
}
