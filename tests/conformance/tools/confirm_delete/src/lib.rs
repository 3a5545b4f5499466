//! Conformance fixture `confirm_delete` (Tasks extension): every call is a
//! task (`task = "required"`) that asks the user to confirm before it
//! "deletes" the file: the task is `input_required` until `tasks/update`
//! answers.

use toolhost_sdk::ask;
use toolhost_sdk::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The file to delete.
    filename: String,
}

struct ConfirmDelete;

impl Tool for ConfirmDelete {
    type Input = Input;
    const DESCRIPTION: &'static str = "Asks the user to confirm, then deletes a file.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let form = json!({
            "type": "object",
            "properties": { "confirm": { "type": "boolean" } },
            "required": ["confirm"],
        });
        let message = format!("Delete {}?", input.filename);
        let answer = ask::elicit(&message, &form).map_err(ToolError::Failed)?;
        let confirmed = matches!(&answer, ask::Answer::Accept(c) if c["confirm"] == true);
        Ok(match confirmed {
            true => format!("Deleted {}.", input.filename),
            false => format!("Kept {}.", input.filename),
        }
        .into())
    }
}

export_tool!(ConfirmDelete);
