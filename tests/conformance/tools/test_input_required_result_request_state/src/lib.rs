//! Conformance fixture `test_input_required_result_request_state`: asks the
//! user to confirm; the answer reaches it only through a retry that echoes
//! the round's request state, so its result says `state-ok`.

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

struct InputRequiredRequestState;

impl Tool for InputRequiredRequestState {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks the user to confirm, then says state-ok.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let form = json!({
            "type": "object",
            "properties": { "ok": { "type": "boolean" } },
            "required": ["ok"],
        });
        let answer = ask::elicit("Please confirm", &form).map_err(ToolError::Failed)?;
        let confirmed = matches!(&answer, ask::Answer::Accept(content) if content["ok"] == true);
        Ok(format!("state-ok: confirmed={confirmed}").into())
    }
}

export_tool!(InputRequiredRequestState);
