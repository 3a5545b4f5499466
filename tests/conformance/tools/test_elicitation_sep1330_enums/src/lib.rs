//! Conformance fixture `test_elicitation_sep1330_enums`: asks the user with
//! a form holding every kind of choice (SEP-1330): untitled and titled
//! single choices, the legacy `enumNames`, and untitled and titled multiple
//! choices.

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

struct Enums;

impl Tool for Enums {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks the user with a form of every kind of choice.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let titled = |prefix: &str, titles: [&str; 3]| -> Vec<Value> {
            titles
                .iter()
                .enumerate()
                .map(|(i, title)| json!({"const": format!("{prefix}{}", i + 1), "title": title}))
                .collect()
        };
        let form = json!({
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {
                    "type": "string",
                    "oneOf": titled("value", ["First Option", "Second Option", "Third Option"]),
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "items": {"anyOf": titled("value", ["First Choice", "Second Choice", "Third Choice"])},
                },
            },
        });
        let answer = ask::elicit("Pick some options.", &form).map_err(ToolError::Failed)?;
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

export_tool!(Enums);
