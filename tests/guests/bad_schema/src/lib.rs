//! Test guest: an object input schema that does not compile (a property of
//! type `nope`), so the tool must not load.

use toolhost_sdk::prelude::*;

struct BadSchema;

impl Tool for BadSchema {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Declares an input schema that is not valid JSON Schema.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn input_schema() -> Option<Value> {
        Some(json!({ "type": "object", "properties": { "x": { "type": "nope" } } }))
    }

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok("unreachable: this tool should not load".into())
    }
}

export_tool!(BadSchema);
