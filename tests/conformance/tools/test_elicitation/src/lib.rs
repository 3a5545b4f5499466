//! Conformance fixture `test_elicitation`: asks the user for a username and
//! an email (`toolhost:tool/ask`'s `elicit`).

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

/// What to ask.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The message to show the user.
    message: String,
}

struct Elicitation;

impl Tool for Elicitation {
    type Input = Input;
    const DESCRIPTION: &'static str = "Asks the user for a username and an email.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let form = json!({
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        });
        let answer = ask::elicit(&input.message, &form).map_err(ToolError::Failed)?;
        Ok(format!("User response: {}", describe(&answer)).into())
    }
}

/// The answer as the suite reads it: its action and content.
fn describe(answer: &ask::Answer) -> String {
    match answer {
        ask::Answer::Accept(content) => {
            format!("action=accept, content={}", Value::Object(content.clone()))
        }
        ask::Answer::Decline => "action=decline".into(),
        ask::Answer::Cancel => "action=cancel".into(),
    }
}

export_tool!(Elicitation);
