//! Conformance fixture `test_simple_text`: one text block.

use toolhost_sdk::prelude::*;

struct SimpleText;

impl Tool for SimpleText {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Returns a simple text response.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok("This is a simple text response for testing.".into())
    }
}

export_tool!(SimpleText);
