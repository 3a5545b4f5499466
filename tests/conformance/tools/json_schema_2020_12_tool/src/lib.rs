//! Conformance fixture `json_schema_2020_12_tool`: an input schema in JSON
//! Schema 2020-12 (`$schema`, `$defs` with an `$anchor`, `$ref`, `enum`,
//! `allOf`/`anyOf`, `if`/`then`/`else`, `additionalProperties`), which every
//! surface must advertise unchanged and the host must validate calls by.

use toolhost_sdk::prelude::*;

/// The input: a name, an address and a way to be reached.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Input {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    address: Option<Address>,
    #[serde(default)]
    contact_method: Option<String>,
    #[serde(default)]
    phone: Option<String>,
    #[serde(default)]
    email: Option<String>,
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
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {
                        "street": { "type": "string" },
                        "city": { "type": "string" }
                    }
                }
            },
            "properties": {
                "name": { "type": "string" },
                "address": { "$ref": "#/$defs/address" },
                "contactMethod": { "type": "string", "enum": ["phone", "email"] },
                "phone": { "type": "string" },
                "email": { "type": "string" }
            },
            "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
            "if": {
                "properties": { "contactMethod": { "const": "phone" } },
                "required": ["contactMethod"]
            },
            "then": { "required": ["phone"] },
            "else": { "required": ["email"] },
            "additionalProperties": false
        }))
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let city = input
            .address
            .and_then(|address| address.city.or(address.street))
            .unwrap_or_else(|| "nowhere".into());
        let name = input.name.unwrap_or_else(|| "nobody".into());
        let reach = match input.contact_method.as_deref() {
            Some("phone") => input.phone,
            _ => input.email.or(input.phone),
        };
        let reach = reach.unwrap_or_else(|| "no one knows where".into());
        Ok(format!("{name} of {city}, reached at {reach}").into())
    }
}

export_tool!(JsonSchema202012);
