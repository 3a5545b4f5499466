//! Test guest: an input schema that is not `type: object`, so the tool must
//! not load.

use toolhost_sdk::prelude::*;

struct NotObjectSchema;

impl Tool for NotObjectSchema {
    type Input = Vec<String>;
    const DESCRIPTION: &'static str = "Declares an array input schema.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn input_schema() -> Option<Value> {
        Some(json!({ "type": "array" }))
    }

    fn execute(_input: Vec<String>, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok("unreachable: this tool should not load".into())
    }
}

export_tool!(NotObjectSchema);
