//! The call pipeline: the one function every surface calls.
//!
//! resolve → validate input → `asOf` time bounds → effect → approval →
//! dry-run stub → session write slot → run in a fresh sandbox → retries →
//! envelope → trace events (docs/ARCHITECTURE.md places it among the parts).

use futures::future::BoxFuture;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::MutexGuard;
use wasmtime::component::Val;

use crate::admission::CallSlot;
use crate::bindings::{guest, types};
use crate::caps::http::{HttpCtx, HttpLimits, Network, RequestBudget};
use crate::caps::kv::KvCtx;
use crate::caps::log::{LogLine, TraceLog};
use crate::caps::stdio::Capture;
use crate::caps::workspace::{self, WasiSetup};
use crate::config::{Permission, WorkspaceAccess};
use crate::error::{CallError, InputError};
use crate::host::Host;
use crate::instance::{Caps, Failure, Instance};
use crate::output::{MAX_JSON_VALUES, ToolOutput};
use crate::plain::{self, PlainFunction};
use crate::registry::{Tool, effect_from_guest};
use crate::session::{
    CallRefused, CallRequested, EventData, EventKind, Session, SessionMode, parse_instant,
    principal_name, principal_only,
};
use crate::tiering::Code;
use crate::tool::{Effect, EffectDecl};
use crate::usage::{CallBounds, Meter, Usage};

/// Attempts a transiently failing read or idempotent call gets, in all.
pub const MAX_ATTEMPTS: u32 = 3;
/// What a stubbed call returns when the tool has no dry-run result.
pub const STUB_TEXT: &str = "Operation acknowledged.";

/// A call's input: JSON text as received, or a value already parsed.
#[derive(Debug, Clone)]
pub enum CallInput {
    /// JSON text; malformed text is an `invalid_tool_input` error.
    Text(String),
    /// A parsed JSON value.
    Json(Value),
}

impl From<Value> for CallInput {
    fn from(value: Value) -> Self {
        Self::Json(value)
    }
}

impl From<&str> for CallInput {
    fn from(text: &str) -> Self {
        Self::Text(text.to_string())
    }
}

impl From<String> for CallInput {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

/// A call that needs someone's approval.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    /// The call id.
    pub call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The validated input.
    pub input: Value,
    /// The call's effect.
    pub effect: Effect,
    /// The session.
    pub session_id: String,
}

/// The answer to an [`ApprovalRequest`].
#[derive(Debug, Clone)]
pub enum ApprovalDecision {
    /// Run it; `by` (auth JSON) reaches the tool as `approved-by`.
    Approved {
        /// Who approved.
        by: Value,
    },
    /// Do not run it; the result is `isError` naming who denied.
    Denied {
        /// Who denied.
        by: Value,
        /// Why, if they said.
        reason: Option<String>,
    },
    /// Nobody answered in time; the call did not run.
    Expired {
        /// How long it waited.
        waited: Duration,
    },
    /// Nobody can answer here; `how` says how to approve on this surface.
    Unavailable {
        /// How to grant approval.
        how: String,
    },
}

/// Decides `always_ask` calls. Surfaces bring their own: the CLI's
/// `--approve`, the HTTP API's approval endpoint, MCP elicitation.
pub trait Approver: Send + Sync {
    /// Decide one call (may wait for a person).
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision>;
}

/// Approves every call on behalf of `by` (the CLI's `--approve`).
pub struct PreApproved(
    /// The approver's auth, as the tool sees it in `approved-by`.
    pub Value,
);

impl Approver for PreApproved {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move { ApprovalDecision::Approved { by: self.0.clone() } })
    }
}

/// Approves nothing: calls that need approval are refused with `how`.
pub struct NoApprover(
    /// How to approve on the surface in use, for the refusal message.
    pub String,
);

impl Approver for NoApprover {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            ApprovalDecision::Unavailable {
                how: self.0.clone(),
            }
        })
    }
}

/// A call to a custom tool, handed to the application that answers it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomToolUse {
    /// The call id.
    pub call_id: String,
    /// The custom tool.
    pub tool_name: String,
    /// The validated input.
    pub input: Arc<Value>,
    /// The session.
    pub session_id: String,
}

/// Answers calls to custom tools (tools declared in `toolhost.toml` with no
/// component). The HTTP API hands them to the session's client; permission
/// policies do not apply, the answering application decides.
pub trait CustomToolRunner: Send + Sync {
    /// Answer one call (may wait for the client), or refuse it.
    fn run<'a>(
        &'a self,
        session: &'a Session,
        request: &'a CustomToolUse,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>>;
}

/// Answers no custom tool call: where nobody can (the CLI, a call outside
/// a session), they are refused with `tool_not_callable`.
pub struct NoCustomTools;

impl CustomToolRunner for NoCustomTools {
    fn run<'a>(
        &'a self,
        _session: &'a Session,
        request: &'a CustomToolUse,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>> {
        Box::pin(async move {
            Err(CallError::ToolNotCallable {
                tool: request.tool_name.clone(),
                reason: "it is a custom tool, answered by the client of a session; \
                         call it in a session (sessionId) over the HTTP API"
                    .into(),
            })
        })
    }
}

/// How a call is made: in which session, approved by whom.
#[derive(Clone)]
pub struct CallOptions {
    /// The session the call belongs to.
    pub session: Arc<Session>,
    /// Who decides `always_ask` calls.
    pub approver: Arc<dyn Approver>,
    /// Who answers calls to custom tools.
    pub custom_tools: Arc<dyn CustomToolRunner>,
    /// The call id to use; a fresh one when absent.
    pub call_id: Option<String>,
}

impl CallOptions {
    /// Options for a call in `session` where nobody can approve.
    pub fn new(session: Arc<Session>) -> Self {
        Self {
            session,
            approver: Arc::new(NoApprover("no approver is available".into())),
            custom_tools: Arc::new(NoCustomTools),
            call_id: None,
        }
    }

    /// The same options with another approver.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// The same options with someone to answer custom tool calls.
    pub fn with_custom_tools(mut self, runner: Arc<dyn CustomToolRunner>) -> Self {
        self.custom_tools = runner;
        self
    }

    /// The same options with a call id chosen by the caller (so a surface
    /// can name the call before it finishes).
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        self.call_id = Some(id.into());
        self
    }
}

/// A fresh call id.
pub fn new_call_id() -> String {
    format!("call_{}", uuid::Uuid::new_v4().simple())
}

/// What a call left in its trace besides the result.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallTrace {
    /// The call's effect, once known.
    pub effect: Option<Effect>,
    /// Who approved it, if it needed approval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<Value>,
    /// The tool's log lines and the host's notes.
    pub logs: Vec<LogLine>,
    /// Log lines dropped past the cap.
    pub logs_dropped: usize,
    /// What the tool printed to stdout (capped).
    pub stdout: String,
    /// Whether stdout was cut at the cap.
    pub stdout_truncated: bool,
    /// What the tool printed to stderr (capped).
    pub stderr: String,
    /// Whether stderr was cut at the cap.
    pub stderr_truncated: bool,
    /// The limit or trap that ended the call, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Which limit ended the call (`timeout`, `memory`, `stack`, `output`), if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<&'static str>,
}

/// A call's envelope: what every surface returns for a call that ran.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResult {
    /// Always true: the call was delivered (a refused call is a [`CallError`]).
    pub ok: bool,
    /// The tool called.
    pub tool_name: String,
    /// The call id, as in the trace events.
    pub call_id: String,
    /// Whether the tool failed (its own error, a trap, a limit).
    pub is_error: bool,
    /// The tool's text, its JSON, or `{content, isError}`.
    pub result: Value,
    /// Wall time of the whole call.
    pub duration_ms: u64,
    /// Whether a dry-run session stubbed the call.
    pub stubbed: bool,
    /// How many times `execute` ran.
    pub attempts: u32,
    /// Whether a read ran in a scratch workspace because the session's
    /// could not be created.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub scratch_workspace: bool,
    /// The full output, for surfaces that pass content blocks on (MCP).
    #[serde(skip)]
    pub output: ToolOutput,
    /// What the call cost the host: the receipt.
    pub usage: Usage,
    /// Logs, stdio and failure details.
    #[serde(skip)]
    pub trace: CallTrace,
}

/// Everything one call shares across its instances.
struct Call<'a> {
    host: &'a Host,
    tool: &'a Arc<Tool>,
    session: &'a Session,
    id: String,
    /// The input, parsed and validated; `input_text` is its JSON.
    input: Arc<Value>,
    input_text: String,
    started: Instant,
    trace: TraceLog,
    stdout: Capture,
    stderr: Capture,
    network: Network,
    http_budget: RequestBudget,
    meter: Arc<Meter>,
}

impl Host {
    /// Run one call through the whole pipeline.
    pub async fn call(
        &self,
        tool_name: &str,
        input: impl Into<CallInput>,
        options: &CallOptions,
    ) -> Result<CallResult, CallError> {
        let started = Instant::now();
        let session = &*options.session;
        let registry = self.registry();
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
        let (input, input_text) = parse_input(tool, input.into())?;
        check_time_args(tool, session, &input)?;

        let network = tool_network(self.network(), tool);
        let input = Arc::new(input);
        let call = Call {
            host: self,
            tool,
            session,
            id: options.call_id.clone().unwrap_or_else(new_call_id),
            input: input.clone(),
            input_text,
            started,
            trace: TraceLog::default(),
            stdout: Capture::new(tool.policy().limits.stdio_bytes),
            stderr: Capture::new(tool.policy().limits.stdio_bytes),
            meter: Meter::new(tool.policy().limits.host),
            http_budget: RequestBudget::new(network.limits().max_requests_per_call),
            network,
        };
        session.events().emit(
            EventKind::ActionsRequested,
            EventData::Requested(Arc::new(CallRequested {
                call_id: call.id.clone(),
                tool_name: tool.name().to_string(),
                input: input.clone(),
                input_bytes: call.input_text.len(),
                session_id: session.id().to_string(),
            })),
        );
        let outcome = call.run(&input, options).await;
        let data = match &outcome {
            Ok(result) => EventData::Result(Arc::new(result.clone())),
            Err(error) => EventData::Refused(Arc::new(CallRefused {
                ok: false,
                call_id: call.id.clone(),
                tool_name: tool.name().to_string(),
                error: json!({ "code": error.code(), "message": error.to_string() }),
            })),
        };
        session.events().emit(EventKind::ActionResult, data);
        outcome
    }
}

/// Parse (when text) and validate the input against the tool's schema.
/// Returns the value and its JSON text, as the guest will receive it.
fn parse_input(tool: &Tool, input: CallInput) -> Result<(Value, String), CallError> {
    let invalid = |message: String| CallError::InvalidInput {
        tool: tool.name().to_string(),
        errors: vec![InputError {
            pointer: String::new(),
            message,
        }],
    };
    let max = tool.policy().limits.input_bytes;
    let too_big = |len: usize| {
        invalid(format!(
            "input is {len} bytes; at most {max} are accepted (max_input_bytes)"
        ))
    };
    let (value, text) = match input {
        CallInput::Text(text) if text.len() > max => return Err(too_big(text.len())),
        CallInput::Text(text) => {
            let value =
                serde_json::from_str(&text).map_err(|e| invalid(format!("not valid JSON: {e}")))?;
            (value, text)
        }
        CallInput::Json(value) => {
            let text = value.to_string();
            if text.len() > max {
                return Err(too_big(text.len()));
            }
            (value, text)
        }
    };
    let errors = tool.validate(&value);
    if !errors.is_empty() {
        return Err(CallError::InvalidInput {
            tool: tool.name().to_string(),
            errors,
        });
    }
    Ok((value, text))
}

/// In a session with `asOf`, every time argument must be an absolute instant
/// with a timezone, no later than `asOf`.
fn check_time_args(tool: &Tool, session: &Session, input: &Value) -> Result<(), CallError> {
    let Some(as_of) = session.as_of() else {
        return Ok(());
    };
    let errors: Vec<InputError> = tool
        .metadata()
        .time_args
        .iter()
        .filter_map(|arg| {
            let problem = match input.get(arg) {
                None | Some(Value::Null) => format!(
                    "time argument `{arg}` is required in a session with asOf {}",
                    as_of.to_rfc3339()
                ),
                Some(Value::String(text)) => match parse_instant(text) {
                    Err(reason) => format!("time argument `{arg}`: {reason}"),
                    Ok(t) if t > as_of => format!(
                        "time argument `{arg}` = {text} is later than the session's asOf {}",
                        as_of.to_rfc3339()
                    ),
                    Ok(_) => return None,
                },
                Some(other) => {
                    format!("time argument `{arg}` must be an ISO-8601 string, found {other}")
                }
            };
            Some(InputError {
                pointer: format!("/{}", arg.replace('~', "~0").replace('/', "~1")),
                message: problem,
            })
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CallError::InvalidInput {
            tool: tool.name().to_string(),
            errors,
        })
    }
}

/// What a finished call records besides its output.
#[derive(Debug, Clone, Default)]
struct Done {
    effect: Option<Effect>,
    attempts: u32,
    stubbed: bool,
    approved_by: Option<Value>,
    scratch_workspace: bool,
}

impl Done {
    fn effect(effect: Effect) -> Self {
        Self {
            effect: Some(effect),
            ..Self::default()
        }
    }
}

impl Call<'_> {
    async fn run(
        &self,
        input: &Arc<Value>,
        options: &CallOptions,
    ) -> Result<CallResult, CallError> {
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
            };
            match options.approver.decide(&request).await {
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
            let _slot = self.write_slot(effect)?;
            return self.ask_client(Done::effect(effect), input, options).await;
        }
        // Admitted first: a call waiting in the queue never keeps its
        // session busy.
        let _admitted = self.admit().await?;
        let _slot = self.write_slot(effect)?;
        let workspace = self.workspace(effect)?;
        let done = Done {
            approved_by,
            scratch_workspace: workspace.as_ref().is_some_and(|w| w.scratch.is_some()),
            ..Done::effect(effect)
        };
        Ok(self
            .execute(done, workspace.as_ref().map(|w| w.path.as_path()))
            .await)
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
    fn deadline(&self) -> Instant {
        Instant::now() + self.tool.policy().timeout
    }

    /// The session's write slot for an idempotent or write call.
    fn write_slot(&self, effect: Effect) -> Result<Option<MutexGuard<'_, ()>>, CallError> {
        Ok(match effect {
            Effect::Read => None,
            Effect::Idempotent | Effect::Write => Some(self.session.try_write_slot()?),
        })
    }

    /// A slot to run tool code in, held by the caller for one phase of the
    /// call: approvals are never waited for while holding one.
    async fn admit(&self) -> Result<CallSlot, CallError> {
        Ok(self.host.gate.admit().await?)
    }

    /// The effect a tool that decides per input gives this input.
    async fn effect_for(&self) -> Result<Effect, Failure> {
        let code = self.tool.code();
        let mut instance = self
            .instance(&code, self.no_caps()?, self.deadline())
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
            let code = self.tool.code();
            let mut instance = self
                .instance(&code, self.no_caps()?, self.deadline())
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

    /// Convert a guest's output, enforcing the output cap before parsing it.
    fn checked(&self, out: types::ToolOutput) -> Result<ToolOutput, Rejected> {
        self.within_output_cap(ToolOutput::guest_size(&out))?;
        ToolOutput::check_guest_shape(&out).map_err(|problem| Rejected {
            problem: format!("output cap hit: {problem}"),
            limit: Some("output"),
        })?;
        ToolOutput::from_guest(out).map_err(|problem| Rejected {
            problem: format!("the tool {problem}"),
            limit: None,
        })
    }

    fn within_output_cap(&self, size: usize) -> Result<(), Rejected> {
        self.meter.output(size);
        let cap = self.tool.policy().limits.output_bytes;
        if size > cap {
            return Err(Rejected {
                problem: format!(
                    "output cap hit: the result is {size} bytes; at most {cap} are allowed (max_output_bytes)"
                ),
                limit: Some("output"),
            });
        }
        Ok(())
    }

    /// The workspace directory this call gets, if its grant gives one. A
    /// read whose session workspace cannot be created gets a scratch one.
    fn workspace(&self, effect: Effect) -> Result<Option<CallWorkspace>, CallError> {
        if self.tool.policy().grants.workspace == WorkspaceAccess::None {
            return Ok(None);
        }
        let error = match self.session.workspace() {
            Ok(dir) => {
                return Ok(Some(CallWorkspace {
                    path: dir.to_path_buf(),
                    scratch: None,
                }));
            }
            Err(e) => e,
        };
        let unavailable = |reason: String| CallError::WorkspaceUnavailable {
            session: self.session.id().to_string(),
            reason,
        };
        if effect != Effect::Read {
            return Err(unavailable(error.to_string()));
        }
        let scratch = tempfile::Builder::new()
            .prefix("toolhost-ws-")
            .tempdir()
            .map_err(|e| unavailable(format!("{error}; no scratch workspace either: {e}")))?;
        self.trace.host(format!(
            "the session's workspace is unavailable ({error}); the read runs in a scratch workspace"
        ));
        Ok(Some(CallWorkspace {
            path: scratch.path().to_path_buf(),
            scratch: Some(scratch),
        }))
    }

    /// Run `execute`, retrying transient failures of read and idempotent
    /// calls; one deadline covers every attempt.
    async fn execute(&self, mut done: Done, workspace: Option<&Path>) -> CallResult {
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
                    .caps(effect, workspace)
                    .map_err(|e| Failure::Host(format!("{e:#}")))?;
                let code = self.tool.code();
                let mut instance = self.instance(&code, caps, deadline).await?;
                match &code {
                    Code::Plain(plain) => Ok(self.call_plain(&mut instance, &plain.function).await),
                    _ => instance.execute(&self.input_text, &ctx).await,
                }
            }
            .await;
            let output = match outcome {
                Err(failure) => {
                    return self.failed(done, &self.describe(&failure), failure.limit());
                }
                Ok(Err(types::ToolError::Transient(message)))
                    if done.attempts < max_attempts && Instant::now() < deadline =>
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

    /// Call a plain component's function with the input's values, its
    /// result as the contract's output: a `result` that is `err` is an
    /// error the model sees, like a tool error.
    async fn call_plain(
        &self,
        instance: &mut Instance,
        function: &PlainFunction,
    ) -> Result<types::ToolOutput, types::ToolError> {
        let params = function
            .params
            .iter()
            .map(|(name, ty)| {
                let value = self.input.get(name).unwrap_or(&Value::Null);
                plain::convert::to_val(value, ty, &format!("/{name}"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(types::ToolError::InvalidInput)?;
        let result = match instance.call_plain(function, &params).await {
            Ok(result) => result,
            Err(failure) => return Err(types::ToolError::Failed(self.describe(&failure))),
        };
        if let Some(value) = &result {
            let size = plain::convert::JsonSize::of(value);
            let cap = self.tool.policy().limits.output_bytes;
            if size.values > MAX_JSON_VALUES || size.bytes > cap {
                self.meter.output(size.bytes);
                self.meter.hit("output", cap as u64);
                return Err(types::ToolError::Failed(format!(
                    "output cap hit: `{}` returned {} JSON values in at least {} bytes; at most \
                     {MAX_JSON_VALUES} values and {cap} bytes are allowed (max_output_bytes)",
                    function.export_path(),
                    size.values,
                    size.bytes
                )));
            }
        }
        let json = |value: &Value| types::ContentBlock::Json(value.to_string());
        Ok(match result.as_ref().map(plain::convert::to_json) {
            None => types::ToolOutput {
                content: vec![types::ContentBlock::Text(format!(
                    "`{}` returned nothing.",
                    function.export_path()
                ))],
                structured: None,
                is_error: false,
            },
            Some(value) => types::ToolOutput {
                content: vec![json(&value)],
                is_error: matches!(result, Some(Val::Result(Err(_)))),
                structured: Some(serde_json::json!({ "result": value }).to_string()),
            },
        })
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

    /// The capabilities `execute` gets: the grant, narrowed by the effect.
    fn caps(&self, effect: Effect, workspace: Option<&Path>) -> anyhow::Result<Caps> {
        let grants = &self.tool.policy().grants;
        let read_only = effect == Effect::Read;
        let perms = workspace::permissions(grants.workspace, read_only);
        let kv = match (&self.host.kv_backend(), grants.kv.is_empty()) {
            (Some(backend), false) => KvCtx::new(Arc::clone(backend), grants.kv.clone(), read_only)
                .with_meter(self.meter.clone()),
            _ => KvCtx::deny_all(),
        };
        Ok(Caps {
            wasi: WasiSetup {
                workspace: workspace.zip(perms),
                env: &grants.env,
                stdout: self.stdout.clone(),
                stderr: self.stderr.clone(),
            }
            .build()?,
            http: HttpCtx::new(
                self.network.clone(),
                Arc::new(grants.http.clone()),
                read_only,
                self.trace.clone(),
            )
            .with_budget(self.http_budget.clone()),
            kv,
        })
    }

    fn no_caps(&self) -> Result<Caps, Failure> {
        Caps::none(&self.trace, &self.stdout, &self.stderr)
            .map_err(|e| Failure::Host(format!("{e:#}")))
    }

    /// A fresh instance of `code` (the tool's code as this phase took it).
    async fn instance(
        &self,
        code: &Code,
        caps: Caps,
        deadline: Instant,
    ) -> Result<Instance, Failure> {
        if Instant::now() >= deadline {
            return Err(Failure::Timeout(self.tool.policy().timeout));
        }
        let Some(pre) = code.pre() else {
            return Err(Failure::Host(format!(
                "`{}` is a custom tool: it has no component to run",
                self.tool.name()
            )));
        };
        let policy = self.tool.policy();
        let bounds = CallBounds {
            memory_bytes: policy.memory_bytes,
            host: policy.limits.host,
            meter: self.meter.clone(),
            output_bytes: policy.limits.output_bytes,
        };
        Instance::new(
            &self.host.engine,
            pre,
            caps,
            &self.trace,
            bounds,
            deadline,
            self.tool.policy().timeout,
        )
        .await
    }

    /// A failure's message, with the guest's panic message when it left one.
    fn describe(&self, failure: &Failure) -> String {
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

    /// The result of a call whose output was not accepted.
    fn rejected(&self, done: Done, rejected: Rejected) -> CallResult {
        self.failed(done, &rejected.problem, rejected.limit)
    }

    /// The result of a call that ended in a limit, trap or bad output.
    fn failed(&self, done: Done, message: &str, limit: Option<&'static str>) -> CallResult {
        let message = format!("tool `{}` failed: {message}", self.tool.name());
        let output = ToolOutput::text(message.clone(), true);
        if let Some(name) = limit {
            self.meter.hit(name, self.limit_value(name));
        }
        let mut result = self.finish(done, output, Some(message));
        result.trace.limit = limit;
        result
    }

    /// The configured value of the limit `name`, as the receipt reports it.
    fn limit_value(&self, name: &str) -> u64 {
        let policy = self.tool.policy();
        let bytes = |n: usize| n as u64;
        match name {
            "timeout" => u64::try_from(policy.timeout.as_millis()).unwrap_or(u64::MAX),
            "memory" => bytes(policy.memory_bytes),
            "host_memory" => bytes(policy.limits.host.bytes),
            "handles" => u64::from(policy.limits.host.handles),
            "output" => bytes(policy.limits.output_bytes),
            "stack" => bytes(crate::engine::MAX_WASM_STACK_BYTES),
            _ => 0,
        }
    }

    fn finish(&self, done: Done, output: ToolOutput, failure: Option<String>) -> CallResult {
        let (logs, logs_dropped) = self.trace.snapshot();
        let (stdout, stdout_truncated) = self.stdout.contents();
        let (stderr, stderr_truncated) = self.stderr.contents();
        let wall = self.started.elapsed();
        CallResult {
            ok: true,
            tool_name: self.tool.name().to_string(),
            call_id: self.id.clone(),
            is_error: output.is_error,
            result: output.result_value(),
            duration_ms: u64::try_from(wall.as_millis()).unwrap_or(u64::MAX),
            stubbed: done.stubbed,
            attempts: done.attempts,
            scratch_workspace: done.scratch_workspace,
            output,
            usage: self
                .meter
                .usage(wall, done.attempts, self.http_budget.tally()),
            trace: CallTrace {
                effect: done.effect,
                approved_by: done.approved_by,
                logs,
                logs_dropped,
                stdout,
                stdout_truncated,
                stderr,
                stderr_truncated,
                failure,
                limit: None,
            },
        }
    }
}

/// The host's network with the tool's own HTTP caps, where it sets them.
fn tool_network(network: &Network, tool: &Tool) -> Network {
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

/// Why a tool's output was not accepted, and which limit that was, if one.
struct Rejected {
    problem: String,
    limit: Option<&'static str>,
}

impl Rejected {
    /// The same rejection, said to be about `what`.
    fn context(self, what: &str) -> Self {
        Self {
            problem: format!("{what}: {}", self.problem),
            ..self
        }
    }
}

/// The workspace a call runs with.
struct CallWorkspace {
    path: PathBuf,
    /// A per-call scratch directory, when the session's was unavailable.
    scratch: Option<tempfile::TempDir>,
}

fn tool_error_message(error: types::ToolError) -> String {
    match error {
        types::ToolError::InvalidInput(message) => format!("invalid input: {message}"),
        types::ToolError::Transient(message) | types::ToolError::Failed(message) => message,
    }
}
