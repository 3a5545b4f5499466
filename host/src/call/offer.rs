//! The instance a request for what a component offers besides its tool (a
//! prompt, a resource) runs in.

use std::sync::Arc;
use std::time::Instant;

use super::pipeline::tool_network;
use crate::admission::CallSlot;
use crate::ask::Asker;
use crate::caps::ask::{Allowed, AskCtx};
use crate::caps::http::RequestBudget;
use crate::caps::log::TraceLog;
use crate::caps::progress::ProgressFeed;
use crate::caps::resource_updates::ResourceUpdates;
use crate::caps::stdio::Capture;
use crate::caps::{CallScope, Caps};
use crate::deadline::Deadline;
use crate::host::Host;
use crate::sandbox::code::{Code, Pre};
use crate::sandbox::instance::{Failure, Instance};
use crate::tools::registry::Tool;
use crate::usage::{CallBounds, Meter};

/// A fresh instance of `tool`'s component, admitted like a call and
/// bounded by the tool's limits, with the tool's grants as a read call gets
/// them (read-only key-value, HTTP to its origins, its environment) but no
/// workspace: such a request belongs to no session. It announces no
/// resource changes. With `asker` it may ask what the tool's grant lets
/// it, as a call asks (request `id` names it to whoever answers); without,
/// nothing. The error says why not, for the request's own error.
pub(super) async fn instance(
    host: &Host,
    tool: &Tool,
    trace: &TraceLog,
    asker: Option<(String, Arc<dyn Asker>)>,
) -> Result<(Instance, CallSlot), String> {
    let slot = host
        .gate()
        .admit()
        .await
        .map_err(|overloaded| overloaded.to_string())?;
    let Some(Code::Contract(pre)) = tool.code() else {
        return Err("the tool has no contract component to ask".into());
    };
    let policy = tool.policy();
    let stdio = Capture::new(policy.limits.stdio_bytes);
    let meter = Meter::new(policy.limits.host);
    let network = tool_network(host.network(), tool);
    let deadline = Deadline::new(Instant::now() + policy.timeout);
    let ask = match asker {
        Some((id, asker)) => AskCtx::asking(Allowed {
            grant: policy.grants.ask.clone(),
            tool: tool.name().to_string(),
            call_id: id,
            asker,
            waiting: host.asking_slots().clone(),
            timeout: host.config().limits.ask_timeout(),
            deadline: deadline.clone(),
            question_bytes: policy.limits.output_bytes,
            answer_bytes: policy.limits.input_bytes,
            trace: trace.clone(),
        }),
        None => AskCtx::refused("a prompt or resource request"),
    };
    let scope = CallScope {
        read_only: true,
        workspace: None,
        kv: host.kv_backend(),
        trace,
        stdout: &stdio,
        stderr: &stdio,
        meter: &meter,
        http_budget: &RequestBudget::new(network.limits().max_requests_per_call),
        network: &network,
        file_slots: host.file_slots(),
        state_root: host.state_root(),
        metrics: (host.tool_metrics(), tool.name()),
        progress: &ProgressFeed::default(),
        resource_updates: &ResourceUpdates::refused("a prompt or resource request"),
        ask: &ask,
        in_session: None,
        sessions: None,
        reminder_check: None,
    };
    let caps = Caps::for_call(&policy.grants, &scope).map_err(|e| format!("{e:#}"))?;
    let bounds = CallBounds {
        memory_bytes: policy.memory_bytes,
        host: policy.limits.host,
        meter,
        output_bytes: policy.limits.output_bytes,
    };
    Instance::new(
        host.engine(),
        Pre::Contract(&pre),
        caps,
        trace,
        bounds,
        deadline,
        policy.timeout,
    )
    .await
    .map(|instance| (instance, slot))
    .map_err(|failure: Failure| failure.to_string())
}
