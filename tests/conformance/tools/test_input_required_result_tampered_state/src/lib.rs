//! Conformance fixture `test_input_required_result_tampered_state`: asks
//! the user to confirm, so the suite can retry with a request state it
//! changed, which the server must refuse.

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

struct InputRequiredTamperedState;

impl Tool for InputRequiredTamperedState {
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

export_tool!(InputRequiredTamperedState);
