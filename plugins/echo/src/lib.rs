//! `echo`: returns the given text, optionally upper-cased.

use toolhost_sdk::prelude::*;

/// What to echo.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// Text to echo back.
    text: String,
    /// Upper-case the text first.
    #[serde(default)]
    uppercase: bool,
}

struct Echo;

impl Tool for Echo {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Echo the given text back, optionally upper-cased.
        Use it to check that tools are wired up.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok(if input.uppercase {
            input.text.to_uppercase().into()
        } else {
            input.text.into()
        })
    }
}

export_tool!(Echo);
