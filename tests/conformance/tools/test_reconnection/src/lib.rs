//! Conformance fixture `test_reconnection`: the server-sse-polling scenario
//! calls it over a POST SSE stream; the tool only answers.

use toolhost_sdk::prelude::*;

struct Reconnection;

impl Tool for Reconnection {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Answers over the call's SSE stream.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok("Reconnection test completed successfully".into())
    }
}

export_tool!(Reconnection);
