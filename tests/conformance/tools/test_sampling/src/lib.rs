//! Conformance fixture `test_sampling`: asks the client's model to answer
//! the prompt it is given (`toolhost:tool/ask`'s `sample`).

use toolhost_sdk::ask::{self, Request};
use toolhost_sdk::prelude::*;

/// What to ask.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The prompt to send to the model.
    prompt: String,
}

struct Sampling;

impl Tool for Sampling {
    type Input = Input;
    const DESCRIPTION: &'static str = "Asks the client's model to answer a prompt.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let sample = ask::sample(&Request::text(input.prompt, 100)).map_err(ToolError::Failed)?;
        let text = sample.text().unwrap_or("(not text)");
        Ok(format!("LLM response: {text}").into())
    }
}

export_tool!(Sampling);
