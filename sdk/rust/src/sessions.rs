//! Sessions on channels (`toolhost:tool/sessions`): the SDK page's
//! `ctx.send` and `ctx.getSession`.
//!
//! The operator grants channels: `sessions = ["support", "ops-*"]` in the
//! tool's `[tools.<name>]`. A read call may look sessions up but not send.
//! A send appends a `user.message` event to the session (started or
//! resumed); the application reading the session's event stream acts on
//! it. Sessions are kept by `toolhost serve` and `toolhost mcp`: a one-shot
//! `tool call` has none.
//!
//! ```no_run
//! use toolhost_sdk::sessions::{self, SendOptions};
//! # fn run() -> Result<(), toolhost_sdk::sessions::Error> {
//! let sent = sessions::send("support", "The build is green", &SendOptions::key("ticket-42"))?;
//! println!("told {} (event {})", sent.session.continuation_token, sent.event_id);
//! # Ok(()) }
//! ```

use std::fmt;

use serde_json::Value;

use crate::bindings::toolhost::tool::sessions as wit;

/// A session on a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Its id (`ses_…`).
    pub id: String,
    /// The channel it is on.
    pub channel: String,
    /// Its key within the channel.
    pub key: String,
    /// `<channel>:<key>`, what a client passes as `continuationToken`.
    pub continuation_token: String,
    /// `live` or `dry-run`.
    pub mode: String,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When a call or a message last used it (RFC 3339).
    pub last_active: String,
}

/// Which session a message goes to, and on whose behalf. `Default` starts
/// a new session with a fresh key, as this call's principal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SendOptions {
    /// Resume this session (it must be on the channel).
    pub session_id: Option<String>,
    /// Start or resume the session `<channel>:<key>`.
    pub key: Option<String>,
    /// The principal to send as (a JSON object); this call's session's
    /// principal when `None`.
    pub auth: Option<Value>,
}

impl SendOptions {
    /// Start or resume the session `<channel>:<key>`.
    pub fn key(key: impl Into<String>) -> Self {
        Self {
            key: Some(key.into()),
            ..Self::default()
        }
    }

    /// Resume the session with this id.
    pub fn session(id: impl Into<String>) -> Self {
        Self {
            session_id: Some(id.into()),
            ..Self::default()
        }
    }

    /// The same options, sending as `auth`: the call's own principal, or
    /// one the tool's `send_as` grant names.
    pub fn as_principal(mut self, auth: Value) -> Self {
        self.auth = Some(auth);
        self
    }
}

/// What a send did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// The session the message went to.
    pub session: SessionInfo,
    /// Whether the send started it.
    pub started: bool,
    /// The `user.message` event's id in its event stream.
    pub event_id: u64,
}

/// Why the host did not look up or send: not granted for the channel, a
/// read call, no sessions on this host, another principal's session, a
/// message too large, or too many sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sessions: {}", self.0)
    }
}

impl std::error::Error for Error {}

impl From<wit::SessionInfo> for SessionInfo {
    fn from(s: wit::SessionInfo) -> Self {
        Self {
            id: s.id,
            channel: s.channel,
            key: s.key,
            continuation_token: s.continuation_token,
            mode: s.mode,
            created_at: s.created_at,
            last_active: s.last_active,
        }
    }
}

/// Start or resume a session on `channel` and append `message` to it.
pub fn send(channel: &str, message: &str, options: &SendOptions) -> Result<Sent, Error> {
    let options = wit::SendOptions {
        session_id: options.session_id.clone(),
        key: options.key.clone(),
        auth: options.auth.as_ref().map(Value::to_string),
    };
    wit::send(channel, message, &options)
        .map(|sent| Sent {
            session: sent.session.into(),
            started: sent.started,
            event_id: sent.event_id,
        })
        .map_err(Error)
}

/// The session `id` on `channel`, if there is one this call's principal
/// may use.
pub fn get_session(channel: &str, id: &str) -> Result<Option<SessionInfo>, Error> {
    wit::get_session(channel, id)
        .map(|found| found.map(SessionInfo::from))
        .map_err(Error)
}
