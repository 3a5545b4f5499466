//! What a tool knows about the call it is running.

use serde_json::Value;

use crate::bindings::toolhost::tool::types as wit;

/// What a tool knows about the call it is running.
///
/// `Default` gives a first-attempt call in a live session with empty ids,
/// which is handy for unit-testing a tool's `execute` natively.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallContext {
    /// Unique per call; matches the trace's `actions.requested` and
    /// `action.result` events.
    pub call_id: String,
    /// 1 on the first attempt; retries run in fresh instances with 2, 3.
    pub attempt: u32,
    /// The session the call belongs to.
    pub session: Session,
    /// Auth of whoever approved the call; `None` when it needed no approval.
    pub approved_by: Option<Value>,
    /// The session's frozen instant (RFC 3339), when it has one.
    pub as_of: Option<String>,
    /// The session's workspace directory as the tool sees it
    /// (`/workspace`); `None` when the tool is granted no workspace.
    pub workspace_dir: Option<String>,
    /// The host's durable state directory, shared by every session
    /// (`/state`); `None` unless the tool is granted `state`. Read-only in
    /// a read call.
    pub state_root: Option<String>,
}

/// The session a call belongs to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Session {
    /// The session id.
    pub id: String,
    /// The channel the session came from, when it has one.
    pub channel: Option<String>,
    /// Live or dry-run.
    pub mode: SessionMode,
    /// The session owner's auth, when known.
    pub auth: Option<Value>,
}

/// Whether a session's calls take effect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SessionMode {
    /// Calls run for real.
    #[default]
    Live,
    /// Reads run; idempotent and write calls are stubbed (they never reach
    /// `execute`).
    DryRun,
}

impl CallContext {
    /// The context of the running call: `ctx` with the directories the
    /// host mounted for it.
    pub(crate) fn of_call(ctx: wit::CallContext) -> Self {
        let (workspace_dir, state_root) = mounts();
        Self {
            workspace_dir,
            state_root,
            ..Self::from_wit(ctx)
        }
    }

    fn from_wit(ctx: wit::CallContext) -> Self {
        Self {
            call_id: ctx.call_id,
            attempt: ctx.attempt,
            session: Session {
                id: ctx.session.id,
                channel: ctx.session.channel,
                mode: match ctx.session.mode {
                    wit::SessionMode::Live => SessionMode::Live,
                    wit::SessionMode::DryRun => SessionMode::DryRun,
                },
                auth: ctx.session.auth.map(parse_json),
            },
            approved_by: ctx.approved_by.map(parse_json),
            as_of: ctx.as_of,
            workspace_dir: None,
            state_root: None,
        }
    }
}

impl CallContext {
    /// Start or resume a session on `channel` and append `message` to it
    /// (the SDK page's `ctx.send`); see [`crate::sessions`].
    pub fn send(
        &self,
        channel: &str,
        message: &str,
        options: &crate::sessions::SendOptions,
    ) -> Result<crate::sessions::Sent, crate::sessions::Error> {
        crate::sessions::send(channel, message, options)
    }

    /// The session `id` on `channel` (the SDK page's `ctx.getSession`);
    /// see [`crate::sessions`].
    pub fn get_session(
        &self,
        channel: &str,
        id: &str,
    ) -> Result<Option<crate::sessions::SessionInfo>, crate::sessions::Error> {
        crate::sessions::get_session(channel, id)
    }
}

/// Where the host mounted the workspace and the state root for this call.
#[cfg(target_family = "wasm")]
fn mounts() -> (Option<String>, Option<String>) {
    use crate::bindings::toolhost::tool::context;
    (context::workspace_dir(), context::state_root())
}

/// Outside a component (a native unit test) nothing is mounted.
#[cfg(not(target_family = "wasm"))]
fn mounts() -> (Option<String>, Option<String>) {
    (None, None)
}

/// Auth arrives as JSON text; text that is not JSON is kept as a string.
fn parse_json(text: String) -> Value {
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn converts_the_contract_context() {
        let ctx = CallContext::from_wit(wit::CallContext {
            call_id: "c1".into(),
            attempt: 2,
            session: wit::SessionInfo {
                id: "s1".into(),
                channel: Some("slack".into()),
                mode: wit::SessionMode::DryRun,
                auth: Some(r#"{"sub":"ana"}"#.into()),
            },
            approved_by: Some("not json".into()),
            as_of: Some("2026-01-01T00:00:00Z".into()),
        });
        assert_eq!(ctx.attempt, 2);
        assert_eq!(ctx.session.mode, SessionMode::DryRun);
        assert_eq!(ctx.session.auth, Some(json!({"sub": "ana"})));
        assert_eq!(ctx.approved_by, Some(json!("not json")));
    }
}
