//! The errors every surface matches on.
//!
//! A [`CallError`] means the call never reached the tool's `execute` (or was
//! refused by the host). A tool that ran and failed — its own error, a trap, a
//! limit hit — is not a `CallError`: it is an envelope with `isError: true`.

use serde::Serialize;

use crate::admission::Overloaded;

/// One input validation failure: where in the input, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputError {
    /// JSON pointer into the input (`""` for the whole input).
    pub pointer: String,
    /// What was wrong, in words.
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "at {at}: {}", self.message)
    }
}

/// Why a call was refused before it ran.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// No enabled tool has this name.
    #[error("unknown tool `{name}`{}", suggestion(.known))]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The names that do exist, to suggest from.
        known: Vec<String>,
    },
    /// The input is not JSON, fails the tool's schema, or breaks a time bound.
    #[error("invalid input for tool `{tool}`: {}", join(.errors))]
    InvalidInput {
        /// The tool called.
        tool: String,
        /// Every problem found, each with its JSON pointer.
        errors: Vec<InputError>,
    },
    /// The tool is `always_ask` and nobody approved the call.
    #[error("tool `{tool}` requires approval before it runs ({how})")]
    ApprovalRequired {
        /// The tool called.
        tool: String,
        /// How to grant it on the surface in use.
        how: String,
    },
    /// The tool exists but cannot run here: a custom tool outside a session,
    /// or a toolset tool that cannot run here (`bash` without its sandbox,
    /// `web_search` without a search engine).
    #[error("tool `{tool}` cannot be called here: {reason}")]
    ToolNotCallable {
        /// The tool called.
        tool: String,
        /// Why, and where it can be called.
        reason: String,
    },
    /// Another idempotent or write call holds the session's write slot.
    #[error("session `{session}` is busy: another write call is running in it")]
    SessionBusy {
        /// The session id.
        session: String,
    },
    /// The session ended after the call was bound to it (on another
    /// server, or while the call ran: ending a session ends its calls).
    #[error("session `{session}` has ended")]
    SessionEnded {
        /// The session id.
        session: String,
    },
    /// Someone ended the call while it ran (`DELETE /calls/<id>`).
    #[error("call `{call}` was ended while it ran")]
    CallEnded {
        /// The call id.
        call: String,
    },
    /// The session is bound to an agent version this host no longer has
    /// loaded (its tools changed while the server was down).
    #[error(
        "session `{session}` runs {pin}, which this host no longer has loaded (the tools \
         changed while it was down); upgrade the session to move it to version {latest}"
    )]
    VersionUnavailable {
        /// The session id.
        session: String,
        /// The version it is bound to.
        pin: crate::agent_pin::AgentPin,
        /// The agent's latest version.
        latest: u64,
    },
    /// The session's workspace could not be made available to a write call.
    #[error("workspace for session `{session}` is unavailable: {reason}")]
    WorkspaceUnavailable {
        /// The session id.
        session: String,
        /// The underlying failure.
        reason: String,
    },
    /// The tool needs the shared state store (Redis) and it does not
    /// answer: nothing ran; retry when it is back.
    #[error("tool `{tool}` needs the shared state store, which is unavailable: {reason}")]
    StateUnavailable {
        /// The tool called.
        tool: String,
        /// Why, naming the store.
        reason: String,
    },
    /// Every call slot is taken and the queue is full, or the call waited
    /// past the queue timeout: nothing ran; retry later.
    #[error(transparent)]
    Overloaded(#[from] Overloaded),
    /// A fault in the host itself, not in the tool or the request.
    #[error("internal error: {0:#}")]
    Internal(#[from] anyhow::Error),
}

impl CallError {
    /// The stable, machine-readable code surfaces report (`unknown_tool`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownTool { .. } => "unknown_tool",
            Self::InvalidInput { .. } => "invalid_tool_input",
            Self::ApprovalRequired { .. } => "approval_required",
            Self::ToolNotCallable { .. } => "tool_not_callable",
            Self::SessionBusy { .. } => "session_busy",
            Self::SessionEnded { .. } => "session_not_found",
            Self::CallEnded { .. } => "call_ended",
            Self::VersionUnavailable { .. } => "agent_version_unavailable",
            Self::WorkspaceUnavailable { .. } => "workspace_unavailable",
            Self::StateUnavailable { .. } => "state_unavailable",
            Self::Overloaded(_) => "overloaded",
            Self::Internal(_) => "internal_error",
        }
    }
}

fn join(errors: &[InputError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

fn suggestion(known: &[String]) -> String {
    if known.is_empty() {
        " (no tools are loaded)".to_string()
    } else {
        format!(" (available: {})", known.join(", "))
    }
}
