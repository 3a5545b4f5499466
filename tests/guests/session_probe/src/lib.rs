//! Test guest: looks sessions up and sends them messages as told, and
//! reports each outcome, so tests can check the sessions capability's
//! grant, channel patterns, read calls, owners and bounds.

use toolhost_sdk::prelude::*;
use toolhost_sdk::sessions::{SendOptions, SessionInfo};

/// What to try.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The effect to declare for this call: `read` or `write` (default).
    #[serde(default)]
    effect: Option<String>,
    /// The channel.
    channel: String,
    /// Send this message (`times` times); without it, look up `session_id`.
    #[serde(default)]
    message: Option<String>,
    /// Send a message of this many bytes of `x` instead.
    #[serde(default)]
    message_bytes: Option<usize>,
    /// How many times to send.
    #[serde(default)]
    times: Option<u32>,
    /// The session to resume or look up.
    #[serde(default)]
    session_id: Option<String>,
    /// The key to start or resume.
    #[serde(default)]
    key: Option<String>,
    /// The principal to send as.
    #[serde(default)]
    auth: Option<Value>,
}

struct SessionProbe;

fn info(session: &SessionInfo) -> Value {
    json!({
        "id": session.id,
        "channel": session.channel,
        "key": session.key,
        "continuationToken": session.continuation_token,
        "mode": session.mode,
    })
}

impl Tool for SessionProbe {
    type Input = Input;
    const DESCRIPTION: &'static str =
        "Looks up and sends to sessions as told; reports each outcome.";
    const EFFECT: EffectDecl = EffectDecl::ByInput;

    fn effect_for(input: &Input) -> Effect {
        match input.effect.as_deref() {
            Some("read") => Effect::Read,
            _ => Effect::Write,
        }
    }

    fn execute(input: Input, ctx: &CallContext) -> Result<Output, ToolError> {
        let message = match (&input.message, input.message_bytes) {
            (Some(text), _) => Some(text.clone()),
            (None, Some(n)) => Some("x".repeat(n)),
            (None, None) => None,
        };
        let Some(message) = message else {
            let id = input.session_id.as_deref().unwrap_or_default();
            return Ok(match ctx.get_session(&input.channel, id) {
                Ok(found) => json!({ "ok": true, "found": found.as_ref().map(info) }),
                Err(e) => json!({ "ok": false, "error": e.0 }),
            }
            .into());
        };
        let options = SendOptions {
            session_id: input.session_id.clone(),
            key: input.key.clone(),
            auth: input.auth.clone(),
        };
        let outcomes: Vec<Value> = (0..input.times.unwrap_or(1))
            .map(|_| match ctx.send(&input.channel, &message, &options) {
                Ok(sent) => json!({
                    "ok": true,
                    "session": info(&sent.session),
                    "started": sent.started,
                    "eventId": sent.event_id,
                }),
                Err(e) => json!({ "ok": false, "error": e.0 }),
            })
            .collect();
        Ok(json!({ "sent": outcomes }).into())
    }
}

export_tool!(SessionProbe);
