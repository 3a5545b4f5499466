//! Conformance fixture `json_schema_2020_12_tool`: an input schema that uses
//! JSON Schema 2020-12 keywords (`$schema`, `$defs`, `$ref`,
//! `additionalProperties`), which every surface must advertise unchanged.

use toolhost_sdk::prelude::*;

/// The input: a name and an address.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    address: Option<Address>,
}

/// A postal address.
#[derive(Deserialize, JsonSchema)]
struct Address {
    #[serde(default)]
    street: Option<String>,
    #[serde(default)]
    city: Option<String>,
}

struct JsonSchema202012;

impl Tool for JsonSchema202012 {
    type Input = Input;
    const DESCRIPTION: &'static str = "Tool with JSON Schema 2020-12 features";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn input_schema() -> Option<Value> {
        Some(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {
                        "street": { "type": "string" },
                        "city": { "type": "string" }
                    }
                }
            },
            "properties": {
                "name": { "type": "string" },
                "address": { "$ref": "#/$defs/address" }
            },
            "additionalProperties": false
        }))
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let city = input
            .address
            .and_then(|address| address.city.or(address.street))
            .unwrap_or_else(|| "nowhere".into());
        let name = input.name.unwrap_or_else(|| "nobody".into());
        Ok(format!("{name} of {city}").into())
    }
}

export_tool!(JsonSchema202012);
