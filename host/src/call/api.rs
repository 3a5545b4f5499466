//! What a surface hands the pipeline: a call's input and options, and the
//! two parties a call may wait for (who approves `always_ask` calls, who
//! answers custom tools).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::{Value, json};

use crate::ask::{Asker, NoAsker};
use crate::caps::CallWatcher;
use crate::error::CallError;
use crate::output::ToolOutput;
use crate::session::{EventData, EventKind, Session};
use crate::tool::Effect;

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
    /// Where [`Self::waiting`] records that the call waits.
    #[serde(skip)]
    pub(crate) wait: WaitRecord,
}

impl ApprovalRequest {
    /// Say that the call now waits for someone to decide (until
    /// `expires_at`, when the wait is bounded): its session records
    /// `approval.requested`, and `approval.resolved` once the approver
    /// returns. An approver that decides at once does not call it.
    pub fn waiting(&self, expires_at: Option<DateTime<Utc>>) {
        let mut payload = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(at) = expires_at {
            payload["expiresAt"] = json!(at.to_rfc3339());
        }
        self.wait
            .session
            .events()
            .emit(EventKind::ApprovalRequested, EventData::Json(payload));
        self.wait.waited.store(true, Ordering::Relaxed);
    }

    /// Whether the approver said it waited.
    pub(crate) fn waited(&self) -> bool {
        self.wait.waited.load(Ordering::Relaxed)
    }
}

/// The session an approval's wait is recorded in, and whether it was.
#[derive(Clone)]
pub(crate) struct WaitRecord {
    /// The call's session.
    session: Arc<Session>,
    waited: Arc<AtomicBool>,
}

impl WaitRecord {
    /// A record in `session`.
    pub(crate) fn new(session: Arc<Session>) -> Self {
        Self {
            session,
            waited: Arc::default(),
        }
    }
}

impl std::fmt::Debug for WaitRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitRecord")
            .field("waited", &self.waited)
            .finish_non_exhaustive()
    }
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
    /// Who sees the tool's log lines and progress while it runs.
    pub watcher: Option<Arc<dyn CallWatcher>>,
    /// Who answers the tool's questions (`toolhost:tool/ask`).
    pub asker: Arc<dyn Asker>,
    /// What makes the call when it is not a client (a reminder): recorded
    /// as the call's `origin`.
    pub origin: Option<String>,
    /// How many reminders led to the call: 0 for a client's, one more than
    /// the reminder's for a call a reminder makes (see
    /// [`MAX_CHAIN`](crate::session::reminders::MAX_CHAIN)).
    pub reminder_chain: u32,
}

impl CallOptions {
    /// Options for a call in `session` where nobody can approve.
    pub fn new(session: Arc<Session>) -> Self {
        Self {
            session,
            approver: Arc::new(NoApprover("no approver is available".into())),
            custom_tools: Arc::new(NoCustomTools),
            call_id: None,
            watcher: None,
            asker: Arc::new(NoAsker(
                "this surface cannot ask the user or a model (an MCP client that declares \
                 elicitation or sampling can be asked)",
            )),
            origin: None,
            reminder_chain: 0,
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

    /// The same options with someone to see the tool's log lines and
    /// progress as they come (MCP sends them to the client).
    pub fn with_watcher(mut self, watcher: Arc<dyn CallWatcher>) -> Self {
        self.watcher = Some(watcher);
        self
    }

    /// The same options with someone to answer the tool's questions.
    pub fn with_asker(mut self, asker: Arc<dyn Asker>) -> Self {
        self.asker = asker;
        self
    }

    /// The same options for a call made by `origin` rather than a client
    /// (`reminder(<call id>)`).
    pub fn with_origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = Some(origin.into());
        self
    }

    /// The same options for a call that `chain` reminders led to.
    pub fn with_reminder_chain(mut self, chain: u32) -> Self {
        self.reminder_chain = chain;
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
