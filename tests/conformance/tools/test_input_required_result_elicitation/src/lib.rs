//! Conformance fixture `test_input_required_result_elicitation`: asks the
//! user's name under the key `user_name` and greets them. Over MCP
//! 2026-07-28 the question is an input-required round (or answered at once
//! when the request already answers `user_name`); the tool waits inside
//! `ask-all` for the retry.

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
        let question = ask::Question::User {
            message: "What is your name?".into(),
            schema: form,
        };
        let replies = ask::ask_all(&[("user_name", question)]).map_err(ToolError::Failed)?;
        let name = match replies.first() {
            Some(ask::Reply::User(ask::Answer::Accept(content))) => {
                content["name"].as_str().unwrap_or("stranger").to_string()
            }
            _ => "stranger".to_string(),
        };
        Ok(format!("Hello, {name}!").into())
    }
}

export_tool!(InputRequiredElicitation);
