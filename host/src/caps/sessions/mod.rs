//! `toolhost:tool/sessions`: a call looks up sessions on channels and
//! sends them messages, the SDK page's `ctx.getSession` and `ctx.send`.
//!
//! GrantCtx per tool by channel ([`Channels`]); a read call may look up but
//! not send. A send starts or resumes a session in the store the server
//! attached to the host ([`crate::Host::attach_sessions`]) and appends a
//! `user.message` event to it: the application reading the session's event
//! stream acts on it, the host never runs a tool because of it. A tool
//! sends as its call's principal; naming another in `auth` needs a
//! `send_as` grant that covers it, so no tool can speak for a principal
//! the operator did not name. Every message records the session, call and
//! tool it came from. A message
//! is at most [`MAX_MESSAGE_BYTES`], charged to the call's host memory
//! until it is recorded (the session's history holds it after, within its
//! bytes), a call sends at most [`MAX_SENDS_PER_CALL`], and each send
//! counts in the receipt.

mod grant;

use std::sync::Arc;

use serde_json::{Value, json};

pub use self::grant::{Channels, Principals};
use super::grant_ctx::GrantCtx;
use super::{CallScope, Capability, Grants, OUTSIDE_A_CALL, Outside};
use crate::bindings::toolhost::tool::sessions as wit;
use crate::session::{
    EventData, EventKind, NewSession, Session, SessionMode, SessionStore, VOUCHED_BY, principal_id,
    principal_name, principal_only, vouched_name,
};
use crate::shown::quoted;
use crate::usage::Meter;

/// The most bytes one message may have.
pub const MAX_MESSAGE_BYTES: usize = 64 << 10;
/// The most bytes a send's `auth` may have.
pub const MAX_AUTH_BYTES: usize = 4 << 10;
/// The longest channel, key or session id a call may name, in bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// The most messages one call may send.
pub const MAX_SENDS_PER_CALL: u32 = 16;

/// What `grants` give a component importing `interface`, as `inspect`
/// shows it; `None` for another interface.
pub fn import_status(grants: &Grants, interface: &str) -> Option<String> {
    (interface == "toolhost:tool/sessions").then(|| match grants.sessions.is_empty() {
        true => "NOT GRANTED (no channels)".into(),
        false => format!(
            "granted: sessions on {}, sending as the call's principal{} (look up only for \
             read calls)",
            grants.sessions.patterns().join(", "),
            match grants.send_as.patterns() {
                [] => String::new(),
                others => format!(" or {}", others.join(", ")),
            }
        ),
    })
}

/// Who reaches which sessions: what a call's sessions capability needs.
pub struct SessionsGrant {
    /// The sessions of the server.
    pub store: Arc<SessionStore>,
    /// The channels granted.
    pub channels: Channels,
    /// The principals it may send as besides the call's own.
    pub send_as: Principals,
    /// Whether this call may send (not a read call).
    pub may_send: bool,
    /// The call's own session: its principal is the default sender.
    pub from: Arc<Session>,
    /// The call sending.
    pub call_id: String,
    /// The tool sending.
    pub tool: String,
    /// The call's meter.
    pub meter: Arc<Meter>,
}

/// One instance's sessions: granted, or why not.
pub type SessionsCtx = GrantCtx<SessionsGrant>;

impl Capability for SessionsCtx {
    fn for_call(grants: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        Ok(match (scope.in_session, scope.sessions) {
            _ if grants.sessions.is_empty() => Self::refused(
                "sessions are not granted to this tool (`sessions = [\"<channel>\"]` in its \
                 [tools.<name>] reaches them)",
            ),
            (None, _) => Self::refused("a prompt or resource request has no session"),
            (_, None) => Self::refused(
                "this host keeps no sessions: a one-shot `tool call` cannot reach them (run \
                 the tool under `toolhost serve` or `toolhost mcp`)",
            ),
            (Some(call), Some(store)) => Self::granted(SessionsGrant {
                store: Arc::clone(store),
                channels: grants.sessions.clone(),
                send_as: grants.send_as.clone(),
                may_send: !scope.read_only,
                from: Arc::clone(call.session),
                call_id: call.call_id.to_string(),
                tool: call.tool.to_string(),
                meter: scope.meter.clone(),
            }),
        })
    }

    fn outside_a_call(_: &Outside<'_>) -> anyhow::Result<Self> {
        Ok(Self::refused(OUTSIDE_A_CALL))
    }
}

impl SessionsCtx {
    /// The grant, if it covers `channel`.
    fn on(&self, channel: &str) -> Result<Arc<SessionsGrant>, String> {
        let grant = self.grant()?;
        bounded("channel", channel)?;
        if !grant.channels.admits(channel) {
            return Err(format!(
                "`{}` may not reach sessions on channel {}: its grant covers {}",
                grant.tool,
                quoted(channel),
                grant.channels.patterns().join(", ")
            ));
        }
        Ok(grant)
    }
}

/// Refuse a channel, key or session id longer than any the store keeps,
/// before it is looked up.
fn bounded(what: &str, text: &str) -> Result<(), String> {
    if text.len() > MAX_NAME_BYTES {
        return Err(format!(
            "the {what} {} is {} bytes; at most {MAX_NAME_BYTES} are accepted",
            quoted(text),
            text.len()
        ));
    }
    Ok(())
}

/// The principal a message is sent as (its id-like fields, never
/// credentials): the call's own, or the one `auth` names when it is the
/// call's own or the `send_as` grant covers it.
fn sender_auth(grant: &SessionsGrant, auth: Option<String>) -> Result<Option<Value>, String> {
    let own = grant.from.auth().map(principal_only);
    let Some(text) = auth else {
        return Ok(own);
    };
    if text.len() > MAX_AUTH_BYTES {
        return Err(format!(
            "`auth` is {} bytes; at most {MAX_AUTH_BYTES} are accepted",
            text.len()
        ));
    }
    let mut named = match serde_json::from_str(&text) {
        Ok(value @ Value::Object(_)) => principal_only(&value),
        Ok(_) => return Err("`auth` must be a JSON object, e.g. {\"user\": \"ada\"}".into()),
        Err(e) => return Err(format!("`auth` is not JSON: {e}")),
    };
    // The server's own marker and principals are never a tool's to name.
    if let Some(object) = named.as_object_mut() {
        object.remove(VOUCHED_BY);
    }
    if let Some(id) = vouched_name(&named) {
        return Err(format!(
            "`{}` may not send as `{id}`: the server names that principal itself",
            grant.tool
        ));
    }
    let Some(id) = principal_id(&named) else {
        return Err(
            "`auth` names no principal: give one of `user`, `id`, `email`, `name` or \
             `principal`, or leave `auth` out to send as the call's principal"
                .into(),
        );
    };
    if own.as_ref().and_then(principal_id) == Some(id) {
        // The call's own principal as its session has it, whatever else
        // the tool wrote beside the id.
        return Ok(own);
    }
    if grant.send_as.admits(id) {
        return Ok(Some(named));
    }
    Err(format!(
        "`{}` may not send as {}: a tool sends as its call's principal ({}), and as another \
         only when its `send_as` grant names it{}",
        grant.tool,
        quoted(id),
        own.as_ref()
            .map_or_else(|| "none".to_string(), principal_name),
        match grant.send_as.patterns() {
            [] => " (it names none)".to_string(),
            names => format!(" (it names {})", names.join(", ")),
        }
    ))
}

fn info(session: &Session) -> wit::SessionInfo {
    wit::SessionInfo {
        id: session.id().to_string(),
        channel: session.channel().unwrap_or_default().to_string(),
        key: session.key().unwrap_or_default().to_string(),
        continuation_token: session.continuation_token().unwrap_or_default(),
        mode: match session.mode() {
            SessionMode::Live => "live",
            SessionMode::DryRun => "dry-run",
        }
        .to_string(),
        created_at: session.created_at().to_rfc3339(),
        last_active: session.last_active().to_rfc3339(),
    }
}

/// The session a send goes to, and whether the send starts it.
async fn target(
    grant: &SessionsGrant,
    channel: &str,
    options: &wit::SendOptions,
    auth: Option<&Value>,
) -> Result<(Arc<Session>, bool), String> {
    let (session, started) = match (&options.session_id, &options.key) {
        (Some(_), Some(_)) => {
            return Err("give `session-id` or `key`, not both".into());
        }
        (Some(id), None) => {
            let session = grant
                .store
                .find(id)
                .await
                .map_err(|e| e.to_string())?
                .filter(|s| s.channel() == Some(channel))
                .ok_or_else(|| {
                    format!("no session {} on channel {}", quoted(id), quoted(channel))
                })?;
            (session, false)
        }
        (None, key) => grant
            .store
            .resume_or_create(NewSession {
                channel: Some(channel.to_string()),
                key: key.clone(),
                auth: auth.cloned(),
                ..NewSession::default()
            })
            .await
            .map_err(|e| e.to_string())?,
    };
    if session.channel() != Some(channel) {
        return Err(format!(
            "session `{}` is not on channel {}",
            session.id(),
            quoted(channel)
        ));
    }
    if !session.admits(auth) {
        return Err(format!(
            "session `{}` belongs to another principal than the sender",
            session.id()
        ));
    }
    Ok((session, started))
}

impl wit::Host for SessionsCtx {
    async fn get_session(
        &mut self,
        channel: String,
        id: String,
    ) -> Result<Option<wit::SessionInfo>, String> {
        let grant = self.on(&channel)?;
        bounded("session id", &id)?;
        Ok(grant
            .store
            .find(&id)
            .await
            .map_err(|e| e.to_string())?
            .filter(|s| s.channel() == Some(channel.as_str()) && s.admits(grant.from.auth()))
            .map(|s| info(&s)))
    }

    async fn send(
        &mut self,
        channel: String,
        message: String,
        options: wit::SendOptions,
    ) -> Result<wit::Sent, String> {
        let grant = self.on(&channel)?;
        if let Some(key) = &options.key {
            bounded("key", key)?;
        }
        if let Some(id) = &options.session_id {
            bounded("session id", id)?;
        }
        if !grant.may_send {
            return Err(format!(
                "`{}` may not send messages in this call: the call is a read",
                grant.tool
            ));
        }
        if grant.meter.message_sent() > MAX_SENDS_PER_CALL {
            return Err(format!(
                "this call sent {MAX_SENDS_PER_CALL} messages already, the most a call may"
            ));
        }
        if message.len() > MAX_MESSAGE_BYTES {
            return Err(format!(
                "the message is {} bytes; at most {MAX_MESSAGE_BYTES} are accepted",
                message.len()
            ));
        }
        let _held = grant
            .meter
            .charge(message.len(), "a message's bytes")
            .map_err(|e| e.to_string())?;
        let auth = sender_auth(&grant, options.auth.clone())?;
        // A start writes and fsyncs the session's record on a blocking
        // thread (the store does).
        let (session, started) = target(&grant, &channel, &options, auth.as_ref()).await?;
        let event = json!({
            "message": message,
            "channel": session.channel(),
            "sessionId": session.id(),
            "auth": auth,
            "from": {
                "sessionId": grant.from.id(),
                "callId": grant.call_id,
                "tool": grant.tool,
            },
        });
        let event_id = session
            .events()
            .append(EventKind::UserMessage, EventData::Json(event))
            .await
            .map_err(|e| e.to_string())?;
        session.touch();
        Ok(wit::Sent {
            session: info(&session),
            started,
            event_id,
        })
    }
}

/// Link `toolhost:tool/sessions` into a linker whose store data holds a
/// [`SessionsCtx`].
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut SessionsCtx,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, wasmtime::component::HasSelf<SessionsCtx>>(linker, get)
}
