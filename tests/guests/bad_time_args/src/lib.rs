//! Test guest: a time argument that is not a property of the input schema,
//! so the tool must not load.

use toolhost_sdk::prelude::*;

/// The window's end only.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// End of the window, RFC 3339.
    #[allow(dead_code)]
    until: String,
}

struct BadTimeArgs;

impl Tool for BadTimeArgs {
    type Input = Input;
    const DESCRIPTION: &'static str = "Names a time argument its schema lacks.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);
    const TIME_ARGS: &'static [&'static str] = &["since", "until"];

    fn execute(_input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok("unreachable: this tool should not load".into())
    }
}

export_tool!(BadTimeArgs);
