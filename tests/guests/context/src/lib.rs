//! Test guest: returns the call context it was given, so tests can check
//! what reaches a tool (call id, attempt, session, approver, asOf) and the
//! environment variables it sees.

use toolhost_sdk::SessionMode;
use toolhost_sdk::prelude::*;

struct Context;

impl Tool for Context {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Return the call context this call received.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Write);

    fn execute(_input: NoInput, ctx: &CallContext) -> Result<Output, ToolError> {
        let mode = match ctx.session.mode {
            SessionMode::Live => "live",
            SessionMode::DryRun => "dry-run",
        };
        Ok(json!({
            "callId": ctx.call_id,
            "attempt": ctx.attempt,
            "sessionId": ctx.session.id,
            "channel": ctx.session.channel,
            "mode": mode,
            "auth": ctx.session.auth,
            "approvedBy": ctx.approved_by,
            "asOf": ctx.as_of,
            "env": std::env::vars().collect::<std::collections::BTreeMap<_, _>>(),
        })
        .into())
    }
}

export_tool!(Context);
