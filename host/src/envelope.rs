//! The envelope: what a call leaves behind, as every surface reports it and
//! the session's events record it — its result, trace, log lines and
//! progress reports. A leaf below the pipeline, the capabilities and the
//! session: each of them names these records and none of them names
//! another for it (the call module re-exports them).

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::agent_pin::AgentPin;
#[cfg(doc)]
use crate::error::CallError;
use crate::output::ToolOutput;
use crate::tool::Effect;
use crate::usage::{Limit, Usage};

/// One line of a call's trace.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LogLine {
    /// `debug`, `info`, `warn` or `error`; `host` for the host's own notes.
    pub level: &'static str,
    /// The text.
    pub message: String,
}

/// One accepted progress report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    /// How much is done; more than the call's previous report.
    pub progress: f64,
    /// How much there is to do, when the tool knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What the tool is doing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Which call a result or an event is about: flattened into each of them as
/// `callId` and `toolName`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallRef {
    /// The call id, as in the trace events.
    #[serde(rename = "callId")]
    pub id: String,
    /// The tool called.
    #[serde(rename = "toolName")]
    pub tool: String,
    /// What made the call when it was not a client: `reminder(<call id>)`
    /// for a reminder scheduled by that call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The agent version the call ran: `{"name", "version"}`.
    pub agent: AgentPin,
}

/// What a call left in its trace besides the result.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallTrace {
    /// The session the call ran in (for observers; the session's own
    /// events say it already).
    #[serde(skip)]
    pub session_id: String,
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
    /// Which limit ended the call, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
}

/// A call's envelope: what every surface returns for a call that ran.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResult {
    /// Always true: the call was delivered (a refused call is a [`CallError`]).
    pub ok: bool,
    /// Which call this is.
    #[serde(flatten)]
    pub call: CallRef,
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

/// The payload of `actions.requested`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRequested {
    /// Which call.
    #[serde(flatten)]
    pub call: CallRef,
    /// The validated input.
    pub input: Arc<Value>,
    /// The input's size as JSON text, what the history counts it as.
    #[serde(skip)]
    pub input_bytes: usize,
    /// The session.
    pub session_id: String,
}

/// The payload of a `call.progress` event: a running call's report.
#[derive(Debug, Serialize)]
pub struct CallProgress {
    /// Which call.
    #[serde(flatten)]
    pub call: CallRef,
    /// The report.
    #[serde(flatten)]
    pub report: Progress,
}

/// The payload of an `action.result` for a call refused after it was requested.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRefused {
    /// Always false.
    pub ok: bool,
    /// Which call.
    #[serde(flatten)]
    pub call: CallRef,
    /// The error code and message.
    pub error: Value,
}
