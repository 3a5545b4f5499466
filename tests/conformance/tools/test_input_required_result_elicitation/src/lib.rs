//! Conformance fixture `test_input_required_result_elicitation`: asks the
//! user's name and greets them. Over MCP 2026-07-28 the question is an
//! input-required round; the tool waits inside `elicit` for the retry.

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

struct InputRequiredElicitation;

impl Tool for InputRequiredElicitation {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks the user's name, then greets them.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let form = json!({
            "type": "object",
            "properties": { "name": { "type": "string" } },
            "required": ["name"],
        });
        let answer = ask::elicit("What is your name?", &form).map_err(ToolError::Failed)?;
        let name = match &answer {
            ask::Answer::Accept(content) => content["name"].as_str().unwrap_or("stranger"),
            ask::Answer::Decline | ask::Answer::Cancel => "stranger",
        };
        Ok(format!("Hello, {name}!").into())
    }
}

export_tool!(InputRequiredElicitation);
