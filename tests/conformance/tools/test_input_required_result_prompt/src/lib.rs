//! Conformance fixture `test_input_required_result_prompt`: a component
//! whose prompt of that name asks the user, under the key `user_context`,
//! what context it should use (over MCP 2026-07-28, `prompts/get` answers
//! with an input-required round; the retry gets the prompt).

use std::collections::BTreeMap;

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;
use toolhost_sdk::prompts::{Message, Prompt, Prompts};

/// The prompt's name, and the tool's.
const NAME: &str = "test_input_required_result_prompt";

struct PromptThatAsks;

impl Tool for PromptThatAsks {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Offers a prompt that asks the user for its context.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok(format!("This component offers the prompt `{NAME}`.").into())
    }
}

struct Offered;

impl Prompts for Offered {
    fn list() -> Vec<Prompt> {
        vec![Prompt::new(NAME).with_description("A prompt that asks the user for its context.")]
    }

    fn get(name: &str, _arguments: &BTreeMap<String, String>) -> Result<Vec<Message>, String> {
        if name != NAME {
            return Err(format!("no prompt `{name}`"));
        }
        let question = ask::Question::User {
            message: "What context should the prompt use?".into(),
            schema: json!({
                "type": "object",
                "properties": { "context": { "type": "string" } },
                "required": ["context"],
            }),
        };
        let context = match ask::ask_all(&[("user_context", question)])?.pop() {
            Some(ask::Reply::User(ask::Answer::Accept(content))) => content
                .get("context")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            _ => "no context".to_string(),
        };
        Ok(vec![Message::user(format!("Use this context: {context}"))])
    }

    fn complete(_name: &str, _argument: &str, _value: &str) -> Vec<String> {
        Vec::new()
    }
}

export_tool!(PromptThatAsks, prompts = Offered);
