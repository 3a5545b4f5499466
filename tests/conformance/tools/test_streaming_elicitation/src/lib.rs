//! Conformance fixture `test_streaming_elicitation`: asks the user one
//! question mid-call (`toolhost:tool/ask`'s `elicit`), so the suite can
//! check that a 2026-07-28 request's response stream carries no request of
//! the server's own.

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

struct StreamingElicitation;

impl Tool for StreamingElicitation {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks the user to confirm, then answers what they said.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let form = json!({
            "type": "object",
            "properties": { "confirmed": { "type": "boolean", "title": "Confirmed" } },
            "required": ["confirmed"],
        });
        let answer = ask::elicit("Confirm to continue.", &form).map_err(ToolError::Failed)?;
        let said = match answer {
            ask::Answer::Accept(content) => format!("accepted {}", Value::Object(content)),
            ask::Answer::Decline => "declined".into(),
            ask::Answer::Cancel => "cancelled".into(),
        };
        Ok(format!("The user {said}.").into())
    }
}

export_tool!(StreamingElicitation);
