//! JSON Schemas of component value types, matching the JSON that
//! [`super::convert`] reads and writes:
//!
//! | WIT | JSON |
//! | --- | --- |
//! | `bool`, `string`, `char` | boolean, string, a one-character string |
//! | integers | integer within the type's range |
//! | `f32`, `f64` | number |
//! | `list<T>`, `tuple<…>` | array (a tuple has its exact length) |
//! | `record` | object with one property per field (an `option` field may be left out) |
//! | `variant` | a case without payload as its name; one with payload as `{"case": payload}` |
//! | `enum` | one of its names |
//! | `option<T>` | the value or `null` |
//! | `result<T, E>` | `{"ok": T}` or `{"err": E}` |
//! | `flags` | array of the names that are set |

use serde_json::{Value, json};
use wasmtime::component::types::Type;

/// The schema of `ty`, or why it cannot be written as JSON.
pub fn of(ty: &Type) -> Result<Value, String> {
    Ok(match ty {
        Type::Bool => json!({ "type": "boolean" }),
        Type::S8 => integer(i8::MIN, i8::MAX),
        Type::U8 => integer(u8::MIN, u8::MAX),
        Type::S16 => integer(i16::MIN, i16::MAX),
        Type::U16 => integer(u16::MIN, u16::MAX),
        Type::S32 => integer(i32::MIN, i32::MAX),
        Type::U32 => integer(u32::MIN, u32::MAX),
        Type::S64 => integer(i64::MIN, i64::MAX),
        Type::U64 => integer(u64::MIN, u64::MAX),
        Type::Float32 | Type::Float64 => json!({ "type": "number" }),
        Type::Char => json!({ "type": "string", "minLength": 1, "maxLength": 1 }),
        Type::String => json!({ "type": "string" }),
        Type::List(list) => json!({ "type": "array", "items": of(&list.ty())? }),
        Type::Tuple(tuple) => {
            let items = tuple
                .types()
                .map(|t| of(&t))
                .collect::<Result<Vec<_>, _>>()?;
            json!({
                "type": "array",
                "prefixItems": items,
                "minItems": items.len(),
                "maxItems": items.len(),
            })
        }
        Type::Record(record) => {
            let mut properties = serde_json::Map::new();
            let mut required = Vec::new();
            for field in record.fields() {
                if !matches!(field.ty, Type::Option(_)) {
                    required.push(json!(field.name));
                }
                properties.insert(field.name.to_string(), of(&field.ty)?);
            }
            json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            })
        }
        Type::Variant(variant) => {
            let cases = variant
                .cases()
                .map(|case| match &case.ty {
                    None => Ok(json!({ "const": case.name })),
                    Some(ty) => Ok(single_key(case.name, of(ty)?)),
                })
                .collect::<Result<Vec<_>, String>>()?;
            json!({ "oneOf": cases })
        }
        Type::Enum(enum_) => json!({ "type": "string", "enum": enum_.names().collect::<Vec<_>>() }),
        Type::Option(option) => json!({ "anyOf": [of(&option.ty())?, { "type": "null" }] }),
        Type::Result(result) => {
            let side = |ty: Option<Type>| ty.as_ref().map(of).transpose();
            json!({
                "oneOf": [
                    single_key("ok", side(result.ok())?.unwrap_or(json!({ "type": "null" }))),
                    single_key("err", side(result.err())?.unwrap_or(json!({ "type": "null" }))),
                ]
            })
        }
        Type::Flags(flags) => json!({
            "type": "array",
            "items": { "type": "string", "enum": flags.names().collect::<Vec<_>>() },
            "uniqueItems": true,
        }),
        other => return Err(format!("{} values cannot be written as JSON", kind(other))),
    })
}

fn integer(min: impl Into<Value>, max: impl Into<Value>) -> Value {
    json!({ "type": "integer", "minimum": min.into(), "maximum": max.into() })
}

/// `{"type": "object", "properties": {key: schema}, "required": [key]}`
/// with no other key.
fn single_key(key: &str, schema: Value) -> Value {
    json!({
        "type": "object",
        "properties": { key: schema },
        "required": [key],
        "additionalProperties": false,
    })
}

/// A word for a type JSON cannot carry.
fn kind(ty: &Type) -> &'static str {
    match ty {
        Type::Own(_) | Type::Borrow(_) => "resource",
        Type::Future(_) => "future",
        Type::Stream(_) => "stream",
        Type::ErrorContext => "error-context",
        _ => "these",
    }
}
