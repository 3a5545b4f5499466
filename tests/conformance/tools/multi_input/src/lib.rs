//! Conformance fixture `multi_input` (Tasks extension): every call is a
//! task (`task = "required"`) that asks two questions at once (`ask-all`):
//! it stays `input_required` until `tasks/update` has answered both.

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

struct MultiInput;

impl Tool for MultiInput {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks two questions at once, then says the answers.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let question = |message: &str| ask::Question::User {
            message: message.into(),
            schema: json!({
                "type": "object",
                "properties": { "name": { "type": "string" }, "confirm": { "type": "boolean" } },
            }),
        };
        let replies = ask::ask_all(&[
            ("first", question("The first name?")),
            ("second", question("The second name?")),
        ])
        .map_err(ToolError::Failed)?;
        let names: Vec<String> = replies
            .iter()
            .map(|reply| match reply {
                ask::Reply::User(ask::Answer::Accept(content)) => {
                    content["name"].as_str().unwrap_or("?").to_string()
                }
                _ => "?".to_string(),
            })
            .collect();
        Ok(format!("Got {}.", names.join(" and ")).into())
    }
}

export_tool!(MultiInput);
