//! `greet`: asks the person using the client their name, then the client's
//! model for a one-line greeting (`toolhost:tool/ask`). Needs
//! `ask = ["user", "model"]` in the tool's grant; the call's timeout stops
//! while it waits for each answer.

use toolhost_sdk::ask::{self, Answer, Request};
use toolhost_sdk::prelude::*;

struct Greet;

impl Tool for Greet {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "
        Greet the person using the client: ask their name, then ask the model
        for a one-line greeting.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let form = json!({
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Your name", "minLength": 1}},
            "required": ["name"],
        });
        let name = match ask::elicit("What should I call you?", &form).map_err(ToolError::Failed)? {
            Answer::Accept(content) => content
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            Answer::Decline | Answer::Cancel => return Ok("No name, no greeting.".into()),
        };
        let prompt = format!("Write a one-line greeting for {name}.");
        let sample = ask::sample(&Request::text(prompt, 60)).map_err(ToolError::Failed)?;
        let greeting = sample.text().unwrap_or("(the model answered without text)");
        Ok(greeting.to_string().into())
    }
}

export_tool!(Greet);
