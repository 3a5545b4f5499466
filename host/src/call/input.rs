//! The checks a call's input passes before any tool code runs: its size, its
//! JSON, the tool's schema, and in a session with `asOf` its time arguments.

use serde_json::Value;

use super::api::CallInput;
use crate::error::{CallError, InputError};
use crate::session::{Session, parse_instant};
use crate::tools::registry::Tool;

/// Parse (when text) and validate the input against the tool's schema.
/// Returns the value and its JSON text, as the guest will receive it.
pub(super) fn parse_input(tool: &Tool, input: CallInput) -> Result<(Value, String), CallError> {
    let invalid = |message: String| CallError::InvalidInput {
        tool: tool.name().to_string(),
        errors: vec![InputError {
            pointer: String::new(),
            message,
        }],
    };
    let max = tool.policy().limits.input_bytes;
    let too_big = |len: usize| {
        invalid(format!(
            "input is {len} bytes; at most {max} are accepted (max_input_bytes)"
        ))
    };
    let (value, text) = match input {
        CallInput::Text(text) if text.len() > max => return Err(too_big(text.len())),
        CallInput::Text(text) => {
            let value =
                serde_json::from_str(&text).map_err(|e| invalid(format!("not valid JSON: {e}")))?;
            (value, text)
        }
        CallInput::Json(value) => {
            let text = value.to_string();
            if text.len() > max {
                return Err(too_big(text.len()));
            }
            (value, text)
        }
    };
    let errors = tool.validate(&value);
    if !errors.is_empty() {
        return Err(CallError::InvalidInput {
            tool: tool.name().to_string(),
            errors,
        });
    }
    Ok((value, text))
}

/// In a session with `asOf`, every time argument must be an absolute instant
/// with a timezone, no later than `asOf`.
pub(super) fn check_time_args(
    tool: &Tool,
    session: &Session,
    input: &Value,
) -> Result<(), CallError> {
    let Some(as_of) = session.as_of() else {
        return Ok(());
    };
    let errors: Vec<InputError> = tool
        .metadata()
        .time_args
        .iter()
        .filter_map(|arg| {
            let problem = match input.get(arg) {
                None | Some(Value::Null) => format!(
                    "time argument `{arg}` is required in a session with asOf {}",
                    as_of.to_rfc3339()
                ),
                Some(Value::String(text)) => match parse_instant(text) {
                    Err(reason) => format!("time argument `{arg}`: {reason}"),
                    Ok(t) if t > as_of => format!(
                        "time argument `{arg}` = {text} is later than the session's asOf {}",
                        as_of.to_rfc3339()
                    ),
                    Ok(_) => return None,
                },
                Some(other) => {
                    format!("time argument `{arg}` must be an ISO-8601 string, found {other}")
                }
            };
            Some(InputError {
                pointer: format!("/{}", arg.replace('~', "~0").replace('/', "~1")),
                message: problem,
            })
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CallError::InvalidInput {
            tool: tool.name().to_string(),
            errors,
        })
    }
}
