//! What one call shares across its stages and instances: the tool, the
//! session, the input, the trace and stdio captures, the network, the
//! request budget and the meter; and what the stages have decided so far.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::agents::AgentVersion;
use crate::ask::Asker;
use crate::caps::http::{Network, RequestBudget};
use crate::caps::log::TraceLog;
use crate::caps::progress::ProgressFeed;
use crate::caps::resource_updates::ResourceUpdates;
use crate::caps::stdio::Capture;
use crate::envelope::CallRef;
use crate::host::Host;
use crate::session::Session;
use crate::tool::Effect;
use crate::tools::registry::Tool;
use crate::usage::Meter;

/// Everything one call shares across its instances.
pub(super) struct Call<'a> {
    pub(super) host: &'a Host,
    /// The agent version the call runs.
    pub(super) version: &'a Arc<AgentVersion>,
    pub(super) tool: &'a Arc<Tool>,
    pub(super) session: &'a Arc<Session>,
    pub(super) id: String,
    /// What made the call, when not a client (see [`CallRef::origin`]).
    pub(super) origin: Option<String>,
    /// How many reminders led to the call (0 for a client's).
    pub(super) reminder_chain: u32,
    /// The input, parsed and validated; `input_text` is its JSON.
    pub(super) input: Arc<Value>,
    pub(super) input_text: String,
    pub(super) started: Instant,
    pub(super) trace: TraceLog,
    pub(super) progress: ProgressFeed,
    pub(super) resource_updates: ResourceUpdates,
    /// Who answers the tool's questions.
    pub(super) asker: Arc<dyn Asker>,
    pub(super) stdout: Capture,
    pub(super) stderr: Capture,
    pub(super) network: Network,
    pub(super) http_budget: RequestBudget,
    pub(super) meter: Arc<Meter>,
    /// The release of the session's write slot in Redis, under way once
    /// the call has its outcome: awaited beside the recording of its
    /// result, so the two cost one round trip.
    pub(super) slot_release: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Call<'_> {
    /// Wait until the write slot this call held is free in Redis.
    pub(super) async fn slot_released(&self) {
        let release = self
            .slot_release
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(release) = release
            && let Err(e) = release.await
        {
            tracing::warn!("releasing a write slot: {e}");
        }
    }

    /// Which call this is, for its envelope and events.
    pub(super) fn reference(&self) -> CallRef {
        CallRef {
            id: self.id.clone(),
            tool: self.tool.name().to_string(),
            origin: self.origin.clone(),
            agent: self.version.pin().clone(),
        }
    }
}

/// What a finished call records besides its output.
#[derive(Debug, Clone, Default)]
pub(super) struct Done {
    pub(super) effect: Option<Effect>,
    pub(super) attempts: u32,
    pub(super) stubbed: bool,
    pub(super) approved_by: Option<Value>,
    pub(super) scratch_workspace: bool,
}

impl Done {
    pub(super) fn effect(effect: Effect) -> Self {
        Self {
            effect: Some(effect),
            ..Self::default()
        }
    }
}
