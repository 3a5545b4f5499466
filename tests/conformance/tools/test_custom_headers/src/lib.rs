//! Conformance fixture `test_custom_headers`: an input schema whose `region`
//! is mirrored into the `Mcp-Param-Region` header (`x-mcp-header`, SEP-2243),
//! which the server checks against the body before the call runs.

use toolhost_sdk::prelude::*;

/// Where and what to look up.
#[derive(Deserialize, JsonSchema)]
struct Input {
    region: String,
    #[serde(default)]
    query: Option<String>,
}

struct CustomHeaders;

impl Tool for CustomHeaders {
    type Input = Input;
    const DESCRIPTION: &'static str = "Looks a query up in one region (sent as a header too).";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn input_schema() -> Option<Value> {
        Some(json!({
            "type": "object",
            "properties": {
                "region": { "type": "string", "x-mcp-header": "Region" },
                "query": { "type": "string" }
            },
            "required": ["region"]
        }))
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let query = input.query.unwrap_or_default();
        Ok(format!("looked up {query:?} in {}", input.region).into())
    }
}

export_tool!(CustomHeaders);
