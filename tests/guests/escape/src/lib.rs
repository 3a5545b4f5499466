//! Test guest: tries to read and write any path and reports each outcome, so
//! tests can check the workspace preopen's confinement.

use std::fs;

use toolhost_sdk::prelude::*;

/// The path to try.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// Any path, e.g. `/workspace/../etc/passwd`.
    path: String,
    /// The effect to declare for this call: `read` or `write` (default).
    #[serde(default)]
    effect: Option<String>,
}

fn outcome<T>(result: std::io::Result<T>, ok: impl FnOnce(T) -> Value) -> Value {
    match result {
        Ok(value) => json!({ "ok": true, "result": ok(value) }),
        Err(err) => {
            json!({ "ok": false, "error": err.to_string(), "kind": format!("{:?}", err.kind()) })
        }
    }
}

struct Escape;

impl Tool for Escape {
    type Input = Input;
    const DESCRIPTION: &'static str =
        "Tries to read and then write the given path; reports both outcomes.";
    const EFFECT: EffectDecl = EffectDecl::ByInput;

    fn effect_for(input: &Input) -> Effect {
        match input.effect.as_deref() {
            Some("read") => Effect::Read,
            _ => Effect::Write,
        }
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let read = outcome(fs::read(&input.path), |bytes| json!(bytes.len()));
        let write = outcome(fs::write(&input.path, b"escaped\n"), |()| Value::Null);
        Ok(json!({ "path": input.path, "read": read, "write": write }).into())
    }
}

export_tool!(Escape);
