//! Conformance fixture `test_input_required_result_multiple_inputs`: asks
//! the user's name (`user_name`), the model for a greeting (`greeting`) and
//! the client for its roots (`client_roots`) at once: over MCP 2026-07-28,
//! one round of three input requests.

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

struct InputRequiredMultipleInputs;

impl Tool for InputRequiredMultipleInputs {
    type Input = NoInput;
    const DESCRIPTION: &'static str =
        "Asks the user's name, the model for a greeting and the client for its roots at once.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let form = json!({
            "type": "object",
            "properties": { "name": { "type": "string" } },
            "required": ["name"],
        });
        let replies = ask::ask_all(&[
            (
                "user_name",
                ask::Question::User {
                    message: "What is your name?".into(),
                    schema: form,
                },
            ),
            (
                "greeting",
                ask::Question::Model(ask::Request::text("Generate a greeting", 50)),
            ),
            ("client_roots", ask::Question::Roots),
        ])
        .map_err(ToolError::Failed)?;
        let mut said = Vec::new();
        for reply in &replies {
            said.push(match reply {
                ask::Reply::User(ask::Answer::Accept(content)) => {
                    format!("name: {}", content["name"].as_str().unwrap_or("?"))
                }
                ask::Reply::User(_) => "name: not given".to_string(),
                ask::Reply::Model(sample) => {
                    format!("greeting: {}", sample.text().unwrap_or("(not text)"))
                }
                ask::Reply::Roots(roots) => format!("roots: {}", roots.len()),
            });
        }
        Ok(said.join("; ").into())
    }
}

export_tool!(InputRequiredMultipleInputs);
