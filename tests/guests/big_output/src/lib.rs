//! Test guest: returns a text result of the requested size (the output cap
//! must stop it).

use toolhost_sdk::prelude::*;

/// How big a result.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// Bytes of text to return.
    bytes: usize,
}

struct BigOutput;

impl Tool for BigOutput {
    type Input = Input;
    const DESCRIPTION: &'static str = "Returns `bytes` bytes of text.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok("x".repeat(input.bytes).into())
    }
}

export_tool!(BigOutput);
