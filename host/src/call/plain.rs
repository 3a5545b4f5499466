//! One call of a plain component's function: the input's JSON becomes the
//! function's arguments, and its result becomes the contract's output,
//! measured against the output cap before it is turned into JSON.

use serde_json::Value;
use wasmtime::component::Val;

use crate::bindings::types;
use crate::output::MAX_JSON_VALUES;
use crate::plain::{PlainFunction, convert};
use crate::sandbox::instance::{Failure, Instance};
use crate::usage::{Limit, Meter};

/// Call `function` in `instance` with the arguments named in `input`, its
/// result as the contract's output: a `result` that is `err` is an error the
/// model sees, like a tool error, and so are arguments that do not convert
/// and a result past `cap` bytes. `Err` when the instance stopped.
pub(crate) async fn invoke(
    instance: &mut Instance,
    function: &PlainFunction,
    input: &Value,
    cap: usize,
    meter: &Meter,
) -> Result<Result<types::ToolOutput, types::ToolError>, Failure> {
    let params = function.params.iter().map(|(name, ty)| {
        let value = input.get(name).unwrap_or(&Value::Null);
        convert::to_val(value, ty, &format!("/{name}"))
    });
    let params = match params.collect::<Result<Vec<_>, _>>() {
        Ok(params) => params,
        Err(message) => return Ok(Err(types::ToolError::InvalidInput(message))),
    };
    let result = instance.call_plain(function, &params).await?;
    if let Some(value) = &result {
        let size = convert::JsonSize::of(value);
        if size.values > MAX_JSON_VALUES || size.bytes > cap {
            meter.output(size.bytes);
            meter.hit(Limit::Output, cap as u64);
            return Ok(Err(types::ToolError::Failed(format!(
                "output cap hit: `{}` returned {} JSON values in at least {} bytes; at most \
                 {MAX_JSON_VALUES} values and {cap} bytes are allowed (max_output_bytes)",
                function.export_path(),
                size.values,
                size.bytes
            ))));
        }
    }
    let json = |value: &Value| types::ContentBlock::Json(value.to_string());
    Ok(Ok(match result.as_ref().map(convert::to_json) {
        None => types::ToolOutput {
            content: vec![types::ContentBlock::Text(format!(
                "`{}` returned nothing.",
                function.export_path()
            ))],
            structured: None,
            is_error: false,
        },
        Some(value) => types::ToolOutput {
            content: vec![json(&value)],
            is_error: matches!(result, Some(Val::Result(Err(_)))),
            structured: Some(serde_json::json!({ "result": value }).to_string()),
        },
    }))
}
