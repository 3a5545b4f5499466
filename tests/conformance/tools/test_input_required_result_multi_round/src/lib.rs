//! Conformance fixture `test_input_required_result_multi_round`: asks the
//! user two questions, one after the other (two input-required rounds),
//! then answers with both.

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

struct InputRequiredMultiRound;

/// The one string field `field` of the answer to `message`.
fn ask_for(message: &str, field: &str) -> Result<String, ToolError> {
    let form = json!({
        "type": "object",
        "properties": { field: { "type": "string" } },
        "required": [field],
    });
    let answer = ask::elicit(message, &form).map_err(ToolError::Failed)?;
    Ok(match &answer {
        ask::Answer::Accept(content) => content[field].as_str().unwrap_or_default().to_string(),
        ask::Answer::Decline | ask::Answer::Cancel => String::new(),
    })
}

impl Tool for InputRequiredMultiRound {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks the user's name, then their favourite colour.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let name = ask_for("What is your name?", "name")?;
        let color = ask_for("What is your favourite colour?", "color")?;
        Ok(format!("{name} likes {color}.").into())
    }
}

export_tool!(InputRequiredMultiRound);
