//! Running the tool: a fresh instance per attempt with the capabilities
//! its grant and the call's effect allow, and the retries of transient
//! failures under one deadline.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::api::CallInput;
use super::context::{Call, Done};
use super::input::parse_input;
use super::plain;
use crate::bindings::{guest, types};
use crate::caps::ask::{Allowed, AskCtx};
use crate::caps::reminders::CallCheck;
use crate::caps::{CallScope, Caps, InSession};
use crate::deadline::Deadline;
use crate::envelope::CallResult;
use crate::output::ToolOutput;
use crate::sandbox::code::Code;
use crate::sandbox::instance::{Failure, Instance};
use crate::session::SessionMode;
use crate::tool::Effect;
use crate::tools::registry::Registry;
use crate::usage::CallBounds;

/// Attempts a transiently failing read or idempotent call gets, in all.
pub const MAX_ATTEMPTS: u32 = 3;

impl Call<'_> {
    /// Run `execute`, retrying transient failures of read and idempotent
    /// calls; one deadline covers every attempt.
    pub(super) async fn execute(&self, mut done: Done, workspace: Option<&Path>) -> CallResult {
        let effect = done.effect.unwrap_or(Effect::Write);
        let max_attempts = if effect.is_retryable() {
            MAX_ATTEMPTS
        } else {
            1
        };
        let deadline = self.deadline();
        loop {
            done.attempts += 1;
            let ctx = self.context(done.attempts, done.approved_by.as_ref());
            let outcome = async {
                let caps = self
                    .caps(effect, workspace, &deadline)
                    .map_err(|e| Failure::Host(format!("{e:#}")))?;
                let code = self.code()?;
                let mut instance = self.instance(&code, caps, &deadline).await?;
                match &code {
                    Code::Plain(plain) => {
                        let policy = self.tool.policy();
                        let invoked = plain::invoke(
                            &mut instance,
                            &plain.function,
                            &self.input,
                            policy.limits.output_bytes,
                            &self.meter,
                        )
                        .await;
                        Ok(invoked.unwrap_or_else(|failure| {
                            Err(types::ToolError::Failed(self.describe(&failure)))
                        }))
                    }
                    _ => instance.execute(&self.input_text, &ctx).await,
                }
            }
            .await;
            let output = match outcome {
                Err(failure) => {
                    return self.failed(done, &self.describe(&failure), failure.limit());
                }
                Ok(Err(types::ToolError::Transient(message)))
                    if done.attempts < max_attempts && !deadline.passed() =>
                {
                    self.trace.host(format!(
                        "attempt {} failed transiently: {message}; retrying",
                        done.attempts
                    ));
                    continue;
                }
                Ok(Err(error)) => {
                    let message = tool_error_message(error);
                    self.within_output_cap(message.len())
                        .map(|()| ToolOutput::text(message, true))
                }
                Ok(Ok(out)) => self.checked(out),
            };
            return match output {
                Ok(output) => self.finish(done, output, None),
                Err(rejected) => self.rejected(done, rejected),
            };
        }
    }

    /// The guest's view of this call.
    fn context(&self, attempt: u32, approved_by: Option<&Value>) -> guest::CallContext {
        let session = self.session;
        types::CallContext {
            call_id: self.id.clone(),
            attempt,
            session: types::SessionInfo {
                id: session.id().to_string(),
                channel: session.channel().map(str::to_string),
                mode: match session.mode() {
                    SessionMode::Live => types::SessionMode::Live,
                    SessionMode::DryRun => types::SessionMode::DryRun,
                },
                auth: session.auth().map(Value::to_string),
            },
            approved_by: approved_by.map(Value::to_string),
            as_of: session.as_of().map(|t| t.to_rfc3339()),
        }
    }

    /// The capabilities `execute` gets: the grant, narrowed by the effect;
    /// its questions stop `deadline` while they wait.
    fn caps(
        &self,
        effect: Effect,
        workspace: Option<&Path>,
        deadline: &Arc<Deadline>,
    ) -> anyhow::Result<Caps> {
        let policy = self.tool.policy();
        let config = self.host.config();
        let ask = AskCtx::asking(Allowed {
            grant: policy.grants.ask.clone(),
            tool: self.tool.name().to_string(),
            call_id: self.id.clone(),
            asker: self.asker.clone(),
            waiting: self.host.asking_slots().clone(),
            timeout: config.limits.ask_timeout(),
            deadline: deadline.clone(),
            question_bytes: policy.limits.output_bytes,
            answer_bytes: policy.limits.input_bytes,
            trace: self.trace.clone(),
        });
        let in_session = InSession {
            session: self.session,
            call_id: &self.id,
            tool: self.tool.name(),
            budget: config.limits.session_artifact_bytes(),
            reminder_chain: self.reminder_chain,
        };
        // Only a tool granted sessions or reminders reaches the store.
        let grants = &policy.grants;
        let sessions = (!grants.sessions.is_empty() || grants.reminders.is_some())
            .then(|| self.host.sessions())
            .flatten();
        let reminder_check = grants
            .reminders
            .is_some()
            .then(|| reminder_check(self.version.registry().clone()));
        let scope = CallScope {
            read_only: effect == Effect::Read,
            workspace,
            kv: self.host.kv_backend(),
            trace: &self.trace,
            stdout: &self.stdout,
            stderr: &self.stderr,
            meter: &self.meter,
            network: &self.network,
            http_budget: &self.http_budget,
            file_slots: self.host.file_slots(),
            state_root: self.host.state_root(),
            metrics: (self.host.tool_metrics(), self.tool.name()),
            progress: &self.progress,
            resource_updates: &self.resource_updates,
            ask: &ask,
            in_session: Some(&in_session),
            sessions: sessions.as_ref(),
            reminder_check: reminder_check.as_ref(),
        };
        Caps::for_call(grants, &scope)
    }

    pub(super) fn no_caps(&self) -> Result<Caps, Failure> {
        Caps::none(&self.trace, &self.stdout, &self.stderr)
            .map_err(|e| Failure::Host(format!("{e:#}")))
    }

    /// The tool's code as it is now, for one phase of the call.
    pub(super) fn code(&self) -> Result<Code, Failure> {
        self.tool.code().ok_or_else(|| {
            Failure::Host(format!(
                "`{}` is a custom tool: it has no component to run",
                self.tool.name()
            ))
        })
    }

    /// A fresh instance of `code` (the tool's code as this phase took it).
    pub(super) async fn instance(
        &self,
        code: &Code,
        caps: Caps,
        deadline: &Arc<Deadline>,
    ) -> Result<Instance, Failure> {
        if deadline.passed() {
            return Err(Failure::Timeout(self.tool.policy().timeout));
        }
        let pre = code.pre();
        let policy = self.tool.policy();
        let bounds = CallBounds {
            memory_bytes: policy.memory_bytes,
            host: policy.limits.host,
            meter: self.meter.clone(),
            output_bytes: policy.limits.output_bytes,
        };
        Instance::new(
            self.host.engine(),
            pre,
            caps,
            &self.trace,
            bounds,
            deadline.clone(),
            self.tool.policy().timeout,
        )
        .await
    }

    /// A failure's message, with the guest's panic message when it left one.
    pub(super) fn describe(&self, failure: &Failure) -> String {
        let (stderr, _) = self.stderr.contents();
        match (failure, stderr.lines().find(|l| l.contains("panicked at"))) {
            (Failure::Trap(_), Some(panic)) => {
                let detail = stderr
                    .lines()
                    .skip_while(|l| !l.contains("panicked at"))
                    .nth(1)
                    .unwrap_or_default();
                format!("{failure} ({} {})", panic.trim(), detail.trim())
            }
            _ => failure.to_string(),
        }
    }
}

fn tool_error_message(error: types::ToolError) -> String {
    match error {
        types::ToolError::InvalidInput(message) => format!("invalid input: {message}"),
        types::ToolError::Transient(message) | types::ToolError::Failed(message) => message,
    }
}

/// How a reminder's call is checked when it is scheduled: the tool, as the
/// calling session's version has it, and the input against its schema.
fn reminder_check(registry: Arc<Registry>) -> CallCheck {
    Arc::new(move |tool: &str, input: String| {
        let tool = registry
            .get(tool)
            .ok_or_else(|| format!("there is no tool `{tool}` on this host"))?;
        parse_input(tool, CallInput::Text(input))
            .map(|(value, _)| value)
            .map_err(|e| e.to_string())
    })
}
