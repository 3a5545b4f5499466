//! `{{name}}`: greets someone. Replace this with what the tool does.

use toolhost_sdk::prelude::*;

/// Who to greet.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The name of the person to greet.
    #[schemars(length(min = 1, max = 100))]
    name: String,
}

struct Greet;

impl Tool for Greet {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Greet someone by name. Returns the greeting as text; it changes
        nothing, so it is safe to call at any time.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok(format!("Hello, {}!", input.name).into())
    }
}

export_tool!(Greet);
