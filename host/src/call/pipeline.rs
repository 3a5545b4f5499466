//! The stages of one call, in order: resolve, check the input, decide the
//! effect, ask for approval, stub a dry run, take the session's write slot,
//! then run the tool and record the outcome.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::api::{
    ApprovalDecision, ApprovalRequest, CallInput, CallOptions, CustomToolUse, WaitRecord,
    new_call_id,
};
use super::context::{Call, Done};
use super::input::{check_time_args, parse_input};
use super::watch::Watch;
use crate::admission::CallSlot;
use crate::agents::AgentVersion;
use crate::caps::http::{HttpLimits, Network, RequestBudget};
use crate::caps::log::TraceLog;
use crate::caps::progress::ProgressFeed;
use crate::caps::resource_updates::ResourceUpdates;
use crate::caps::stdio::Capture;
use crate::config::Permission;
use crate::deadline::Deadline;
use crate::envelope::{CallRef, CallRefused, CallRequested, CallResult};
use crate::error::CallError;
use crate::host::Host;
use crate::host::calls::running::Ending;
use crate::output::ToolOutput;
use crate::sandbox::instance::Failure;
use crate::session::{
    EventData, EventKind, SessionMode, SlotRefused, WriteSlot, principal_name, principal_only,
};
use crate::tool::{Effect, EffectDecl};
use crate::tools::registry::{Tool, effect_from_guest};
use crate::usage::Meter;

/// What a stubbed call returns when the tool has no dry-run result.
pub const STUB_TEXT: &str = "Operation acknowledged.";

impl Host {
    /// Run one call through the whole pipeline.
    pub async fn call(
        &self,
        tool_name: &str,
        input: impl Into<CallInput>,
        options: &CallOptions,
    ) -> Result<Arc<CallResult>, CallError> {
        let outcome = self.run_call(tool_name, input.into(), options).await;
        self.tell_observers(tool_name, outcome.as_deref());
        outcome
    }

    async fn run_call(
        &self,
        tool_name: &str,
        input: CallInput,
        options: &CallOptions,
    ) -> Result<Arc<CallResult>, CallError> {
        let started = Instant::now();
        let session = &*options.session;
        let version = self.version_for(session).await?;
        let registry = version.registry();
        let tool = registry.get(tool_name).ok_or_else(|| {
            match registry.not_callable_reason(tool_name) {
                Some(reason) => CallError::ToolNotCallable {
                    tool: tool_name.to_string(),
                    reason,
                },
                None => CallError::UnknownTool {
                    name: tool_name.to_string(),
                    known: registry.tools().map(|t| t.name().to_string()).collect(),
                },
            }
        })?;
        if tool.agent_script().is_some() {
            return Err(CallError::ToolNotCallable {
                tool: tool_name.to_string(),
                reason: crate::agent_tools::refusal(tool_name),
            });
        }
        self.check_upstream_drift(&version, tool)?;
        let (input, input_text) = parse_input(tool, input)?;
        check_time_args(tool, session, &input)?;

        let network = tool_network(self.network(), tool);
        let input = Arc::new(input);
        let id = options.call_id.clone().unwrap_or_else(new_call_id);
        let watch = Watch {
            session: options.session.clone(),
            call: CallRef {
                id: id.clone(),
                tool: tool.name().to_string(),
                origin: options.origin.clone(),
                agent: version.pin().clone(),
            },
            surface: options.watcher.clone(),
        };
        let call = Call {
            host: self,
            version: &version,
            tool,
            session: &options.session,
            id,
            origin: options.origin.clone(),
            reminder_chain: options.reminder_chain,
            input: input.clone(),
            input_text,
            started,
            trace: TraceLog::watched(options.watcher.clone()),
            progress: ProgressFeed::watched(Some(Arc::new(watch))),
            asker: options.asker.clone(),
            resource_updates: {
                let owner = Arc::clone(tool);
                ResourceUpdates::for_call(
                    Arc::new(move |uri: &str| owner.offers_resource(uri).is_some()),
                    self.resource_changes().clone(),
                )
            },
            stdout: Capture::new(tool.policy().limits.stdio_bytes),
            stderr: Capture::new(tool.policy().limits.stdio_bytes),
            meter: Meter::new(tool.policy().limits.host),
            http_budget: RequestBudget::new(network.limits().max_requests_per_call),
            network,
            slot_release: std::sync::Mutex::default(),
        };
        session.events().emit(
            EventKind::ActionsRequested,
            EventData::Requested(Arc::new(CallRequested {
                call: call.reference(),
                input: input.clone(),
                input_bytes: call.input_text.len(),
                session_id: session.id().to_string(),
            })),
        );
        let mut running = self.running().start(&call.id, session.id());
        let outcome = tokio::select! {
            biased;
            outcome = call.run(&input, options) => outcome,
            ending = running.ended() => Err(match ending {
                Ending::Session => CallError::SessionEnded {
                    session: session.id().to_string(),
                },
                Ending::Call => CallError::CallEnded {
                    call: call.id.clone(),
                },
            }),
        }
        .map(Arc::new);
        drop(running);
        let data = match &outcome {
            Ok(result) => EventData::Result(Arc::clone(result)),
            Err(error) => EventData::Refused(Arc::new(CallRefused {
                ok: false,
                call: call.reference(),
                error: json!({ "code": error.code(), "message": error.to_string() }),
            })),
        };
        // Awaited, so a client that reads the session's events once the call
        // has answered finds its result there, on any server; beside the
        // slot's release, which the caller's next write needs done.
        let (appended, ()) = tokio::join!(
            session.events().append(EventKind::ActionResult, data),
            call.slot_released()
        );
        if let Err(e) = appended {
            tracing::warn!(
                session = session.id(),
                "a call's result event was not recorded: {e}"
            );
        }
        outcome
    }
}

impl Host {
    /// Refuse a call of an MCP server's tool from a session bound to an
    /// older version whose definition of the tool differs from the one the
    /// server gives now: the version pins the definition, not the server.
    fn check_upstream_drift(&self, version: &AgentVersion, tool: &Tool) -> Result<(), CallError> {
        if tool.upstream().is_none() {
            return Ok(());
        }
        let latest = self.agent(&version.pin().name).ok();
        let Some(latest) = latest.filter(|l| l.pin() != version.pin()) else {
            return Ok(());
        };
        let pinned = version.record().tools.get(tool.name());
        let now = latest.record().tools.get(tool.name());
        let changes = match (pinned, now) {
            (Some(pinned), Some(now)) => pinned.lock.changes(&now.lock),
            (Some(_), None) => vec!["its server no longer offers it".to_string()],
            (None, _) => Vec::new(),
        };
        if changes.is_empty() {
            return Ok(());
        }
        Err(CallError::ToolNotCallable {
            tool: tool.name().to_string(),
            reason: format!(
                "its MCP server now serves a definition that differs from the one {} pinned \
                 ({}); upgrade the session to version {} to call it",
                version.pin(),
                changes.join("; "),
                latest.pin().version
            ),
        })
    }
}

impl Call<'_> {
    /// Record how an approval the call waited for was resolved
    /// (`approval.resolved`).
    fn record_resolution(&self, decision: &ApprovalDecision) {
        let mut payload = match decision {
            ApprovalDecision::Approved { by } => {
                json!({ "decision": "approved", "by": principal_name(by) })
            }
            ApprovalDecision::Denied { by, reason } => {
                json!({ "decision": "denied", "by": principal_name(by), "reason": reason })
            }
            ApprovalDecision::Expired { .. } | ApprovalDecision::Unavailable { .. } => {
                json!({ "decision": "expired" })
            }
        };
        payload["callId"] = json!(self.id);
        payload["toolName"] = json!(self.tool.name());
        self.session
            .events()
            .emit(EventKind::ApprovalResolved, EventData::Json(payload));
    }

    async fn run(
        &self,
        input: &Arc<Value>,
        options: &CallOptions,
    ) -> Result<CallResult, CallError> {
        self.host.check_shared_state(self.tool).await?;
        let effect = match self.tool.metadata().effect {
            EffectDecl::Fixed(effect) => effect,
            EffectDecl::ByInput => {
                let _admitted = self.admit().await?;
                match self.effect_for().await {
                    Ok(effect) => effect,
                    Err(failure) => {
                        let message = self.describe(&failure);
                        return Ok(self.failed(Done::default(), &message, failure.limit()));
                    }
                }
            }
        };
        let stubbed = self.session.mode() == SessionMode::DryRun && effect != Effect::Read;

        let mut approved_by = None;
        let custom = self.tool.is_custom();
        if self.tool.policy().permission == Permission::AlwaysAsk && !stubbed && !custom {
            let request = ApprovalRequest {
                call_id: self.id.clone(),
                tool_name: self.tool.name().to_string(),
                input: Value::clone(input),
                effect,
                session_id: self.session.id().to_string(),
                wait: WaitRecord::new(options.session.clone()),
            };
            let decision = options.approver.decide(&request).await;
            if request.waited() {
                self.record_resolution(&decision);
            }
            match decision {
                ApprovalDecision::Approved { by } => approved_by = Some(principal_only(&by)),
                ApprovalDecision::Denied { by, reason } => {
                    let who = principal_name(&by);
                    let message = match reason {
                        Some(reason) => format!("call denied by {who}: {reason}"),
                        None => format!("call denied by {who}"),
                    };
                    let output = ToolOutput::text(message, true);
                    return Ok(self.finish(Done::effect(effect), output, None));
                }
                ApprovalDecision::Expired { waited } => {
                    let message = format!(
                        "call not approved: nobody approved or denied it within {} s, so it did not run",
                        waited.as_secs()
                    );
                    let output = ToolOutput::text(message, true);
                    return Ok(self.finish(Done::effect(effect), output, None));
                }
                ApprovalDecision::Unavailable { how } => {
                    return Err(CallError::ApprovalRequired {
                        tool: self.tool.name().to_string(),
                        how,
                    });
                }
            }
        }

        if stubbed {
            return self.stub(effect).await;
        }

        if custom {
            let slot = self.write_slot(effect).await?;
            let done = Done::effect(effect);
            let asked = self.ask_client(done.clone(), input, options);
            return self.holding(slot, asked, || Ok(self.slot_lost(done))).await;
        }
        if let Some(server) = self.tool.upstream() {
            // No admission: the server's process runs it, not an instance.
            let slot = self.write_slot(effect).await?;
            let done = Done {
                approved_by,
                ..Done::effect(effect)
            };
            let called = self.call_upstream(server, done.clone(), &options.session);
            return Ok(self.holding(slot, called, || self.slot_lost(done)).await);
        }
        // Admitted first: a call waiting in the queue never keeps its
        // session busy.
        let _admitted = self.admit().await?;
        let slot = self.write_slot(effect).await?;
        let workspace = self.workspace(effect)?;
        let done = Done {
            approved_by,
            scratch_workspace: workspace.as_ref().is_some_and(|w| w.scratch.is_some()),
            ..Done::effect(effect)
        };
        let workspace = workspace.as_ref().map(|w| w.path.as_path());
        if let Some(bash) = self.tool.bash() {
            // On the heap: every call's future would otherwise hold room
            // for a process's.
            let ran = Box::pin(self.run_bash(bash, done.clone(), workspace));
            return Ok(self.holding(slot, ran, || self.slot_lost(done)).await);
        }
        let executed = self.execute(done.clone(), workspace);
        Ok(self.holding(slot, executed, || self.slot_lost(done)).await)
    }

    /// `work`'s outcome, holding `slot`, which is given back before the
    /// call answers (so the caller's next write in the session finds it
    /// free: see [`Call::slot_released`]); `lost()` if the slot is lost
    /// first: `work` is dropped then, which stops the tool (see
    /// `WriteSlot::lost`).
    async fn holding<T>(
        &self,
        slot: Option<WriteSlot<'_>>,
        work: impl Future<Output = T>,
        lost: impl FnOnce() -> T,
    ) -> T {
        let Some(slot) = slot else {
            return work.await;
        };
        let outcome = tokio::select! {
            outcome = work => Some(outcome),
            () = slot.lost() => None,
        };
        *self
            .slot_release
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = slot.release_in_background();
        outcome.unwrap_or_else(lost)
    }

    /// The result of a call stopped because its session's lease was lost.
    fn slot_lost(&self, done: Done) -> CallResult {
        let message = format!(
            "session lease lost: the write slot of session `{}` could not be renewed in Redis \
             in time, so the call was stopped before another server could take the slot; \
             what it did before stopping may have taken effect",
            self.session.id()
        );
        self.failed(done, &message, None)
    }

    /// Hand a custom tool's call to whoever answers it.
    async fn ask_client(
        &self,
        mut done: Done,
        input: &Arc<Value>,
        options: &CallOptions,
    ) -> Result<CallResult, CallError> {
        let request = CustomToolUse {
            call_id: self.id.clone(),
            tool_name: self.tool.name().to_string(),
            input: input.clone(),
            session_id: self.session.id().to_string(),
        };
        done.attempts = 1;
        let output = options.custom_tools.run(self.session, &request).await?;
        let size = serde_json::to_vec(&output.content).map_or(usize::MAX, |v| v.len());
        Ok(match self.within_output_cap(size) {
            Ok(()) => self.finish(done, output, None),
            Err(rejected) => self.rejected(done, rejected),
        })
    }

    /// A fresh deadline for one phase of the call (`effect-for`, the dry-run
    /// result, or `execute` with its retries), so waiting for an approval
    /// never eats into the tool's time.
    pub(super) fn deadline(&self) -> Arc<Deadline> {
        Deadline::new(Instant::now() + self.tool.policy().timeout)
    }

    /// The session's write slot for an idempotent or write call.
    pub(super) async fn write_slot(
        &self,
        effect: Effect,
    ) -> Result<Option<WriteSlot<'_>>, CallError> {
        if effect == Effect::Read {
            return Ok(None);
        }
        match self.session.write_slot().await {
            Ok(slot) => Ok(Some(slot)),
            Err(SlotRefused::Busy) => Err(CallError::SessionBusy {
                session: self.session.id().to_string(),
            }),
            Err(SlotRefused::Ended) => Err(CallError::SessionEnded {
                session: self.session.id().to_string(),
            }),
            Err(SlotRefused::Unavailable(reason)) => Err(CallError::StateUnavailable {
                tool: self.tool.name().to_string(),
                reason: format!(
                    "the write slot of session `{}` is kept in Redis: {reason}",
                    self.session.id()
                ),
            }),
        }
    }

    /// A slot to run tool code in, held by the caller for one phase of the
    /// call: approvals are never waited for while holding one.
    pub(super) async fn admit(&self) -> Result<CallSlot, CallError> {
        Ok(self.host.gate().admit().await?)
    }

    /// The effect a tool that decides per input gives this input.
    async fn effect_for(&self) -> Result<Effect, Failure> {
        let code = self.code()?;
        let mut instance = self
            .instance(&code, self.no_caps()?, &self.deadline())
            .await?;
        Ok(effect_from_guest(
            instance.effect_for(&self.input_text).await?,
        ))
    }

    /// The result of a call a dry-run session stubs.
    async fn stub(&self, effect: Effect) -> Result<CallResult, CallError> {
        let done = Done {
            stubbed: true,
            ..Done::effect(effect)
        };
        let acknowledged = || ToolOutput::text(STUB_TEXT, false);
        if !self.tool.metadata().has_dry_run_result {
            return Ok(self.finish(done, acknowledged(), None));
        }
        let _admitted = self.admit().await?;
        let result = async {
            let code = self.code()?;
            let mut instance = self
                .instance(&code, self.no_caps()?, &self.deadline())
                .await?;
            instance.dry_run_result(&self.input_text).await
        }
        .await;
        Ok(match result {
            Ok(Some(out)) => match self.checked(out) {
                Ok(output) => self.finish(done, output, None),
                Err(rejected) => self.rejected(done, rejected.context("dry-run result")),
            },
            Ok(None) => self.finish(done, acknowledged(), None),
            Err(failure) => self.failed(
                done,
                &format!("dry-run result: {}", self.describe(&failure)),
                failure.limit(),
            ),
        })
    }
}

/// The host's network with the tool's own HTTP caps, where it sets them.
pub(super) fn tool_network(network: &Network, tool: &Tool) -> Network {
    let limits = tool.policy().limits;
    let host = network.limits();
    network.clone().with_limits(HttpLimits {
        max_requests_per_call: limits.http_requests.unwrap_or(host.max_requests_per_call),
        max_response_body_bytes: limits
            .http_response_bytes
            .unwrap_or(host.max_response_body_bytes),
        ..*host
    })
}
