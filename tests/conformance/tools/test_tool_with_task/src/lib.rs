//! Conformance fixture `test_tool_with_task` (Tasks extension): asks the
//! user's name under the key `user_name` (an input-required round of the
//! request, or the answer the request brought), then works two seconds:
//! past `[server] task_after_ms`, the call becomes a task
//! (`task = "optional"`) whose result greets the name.

use std::time::Duration;

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

struct ToolWithTask;

impl Tool for ToolWithTask {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks the user's name, works a while, then greets them.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let question = ask::Question::User {
            message: "What is your name?".into(),
            schema: json!({
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"],
            }),
        };
        let name = match ask::ask_all(&[("user_name", question)])
            .map_err(ToolError::Failed)?
            .pop()
        {
            Some(ask::Reply::User(ask::Answer::Accept(content))) => {
                content["name"].as_str().unwrap_or("stranger").to_string()
            }
            _ => "stranger".to_string(),
        };
        std::thread::sleep(Duration::from_secs(2));
        Ok(format!("Hello, {name}! The work is done.").into())
    }
}

export_tool!(ToolWithTask);
