//! Conformance fixture `test_elicitation_sep1034_defaults`: asks the user
//! with a form whose every primitive property has a default (SEP-1034).

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

struct Defaults;

impl Tool for Defaults {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks the user with a form whose fields have defaults.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let form = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {
                    "type": "string",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "default": true},
            },
        });
        let answer =
            ask::elicit("Confirm or change these values.", &form).map_err(ToolError::Failed)?;
        let text = match answer {
            ask::Answer::Accept(content) => {
                format!(
                    "Elicitation completed: action=accept, content={}",
                    Value::Object(content)
                )
            }
            ask::Answer::Decline => "Elicitation completed: action=decline, content={}".into(),
            ask::Answer::Cancel => "Elicitation completed: action=cancel, content={}".into(),
        };
        Ok(text.into())
    }
}

export_tool!(Defaults);
