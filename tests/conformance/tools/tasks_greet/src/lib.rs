//! Conformance fixture `greet` (Tasks extension; built as `tasks_greet`,
//! beside the example `greet`, and served as `greet`): a tool whose calls
//! are never tasks (`task = "never"`); it greets at once.

use toolhost_sdk::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    /// Whom to greet.
    name: String,
}

struct Greet;

impl Tool for Greet {
    type Input = Input;
    const DESCRIPTION: &'static str = "Greets someone by name.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok(format!("Hello, {}!", input.name).into())
    }
}

export_tool!(Greet);
