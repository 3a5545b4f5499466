//! `flaky_lookup`: a lookup whose backing service fails the first attempts,
//! to show the host's retries of transient failures.

use toolhost_sdk::prelude::*;

/// What to look up.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The key to look up.
    key: String,
    /// How many attempts fail before the service answers (default 2).
    #[serde(default = "two")]
    fail_times: u32,
}

fn two() -> u32 {
    2
}

/// The stored value of a key: its FNV-1a hash, as the service would return it.
fn value_of(key: &str) -> String {
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

struct FlakyLookup;

impl Tool for FlakyLookup {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Look up the value stored under a key. The lookup service is unreliable:
        the first `fail_times` attempts fail transiently and are retried.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, ctx: &CallContext) -> Result<Output, ToolError> {
        if ctx.attempt <= input.fail_times {
            return Err(ToolError::transient(format!(
                "lookup service unavailable (attempt {})",
                ctx.attempt
            )));
        }
        Ok(
            json!({ "key": input.key, "value": value_of(&input.key), "attempts": ctx.attempt })
                .into(),
        )
    }
}

export_tool!(FlakyLookup);
