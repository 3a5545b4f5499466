//! Test guest: sleeps `ms` milliseconds, then answers "slow": a call that is
//! still running while a test replaces or reloads the tool.

use std::time::Duration;

use toolhost_sdk::prelude::*;

/// How long to take.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// Milliseconds to sleep before answering.
    ms: u64,
}

struct Slow;

impl Tool for Slow {
    type Input = Input;
    const DESCRIPTION: &'static str = "Sleep `ms` milliseconds, then answer \"slow\".";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        std::thread::sleep(Duration::from_millis(input.ms));
        Ok("slow".into())
    }
}

export_tool!(Slow);
