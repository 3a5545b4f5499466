//! Test guest: a write that always fails transiently, to show that writes
//! are never retried.

use toolhost_sdk::prelude::*;

/// What to write.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The key to write.
    #[allow(dead_code)]
    key: String,
}

struct FlakyWrite;

impl Tool for FlakyWrite {
    type Input = Input;
    const DESCRIPTION: &'static str = "A write whose backend always fails transiently.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Write);

    fn execute(_input: Input, ctx: &CallContext) -> Result<Output, ToolError> {
        Err(ToolError::transient(format!(
            "write backend unavailable (attempt {})",
            ctx.attempt
        )))
    }
}

export_tool!(FlakyWrite);
