//! Test guest: sets or gets a key in the `default` bucket. `set_then_hang`
//! sets the key, drops a marker file in the workspace and never returns, so a
//! test can kill the host process right after an acknowledged commit.

use toolhost_sdk::kv::Bucket;
use toolhost_sdk::prelude::*;

/// What to do.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// `get`, `set`, or `set_then_hang`.
    action: String,
    /// The key.
    key: String,
    /// The value to set (text).
    #[serde(default)]
    value: String,
}

struct KvProbe;

impl Tool for KvProbe {
    type Input = Input;
    const DESCRIPTION: &'static str = "Get or set a key in the `default` bucket.";
    const EFFECT: EffectDecl = EffectDecl::ByInput;

    fn effect_for(input: &Input) -> Effect {
        if input.action == "get" {
            Effect::Read
        } else {
            Effect::Write
        }
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let bucket = Bucket::open("default")?;
        match input.action.as_str() {
            "get" => {
                let value = bucket.get(&input.key)?;
                let text = value.map(|v| String::from_utf8_lossy(&v).into_owned());
                Ok(json!({ "key": input.key, "value": text }).into())
            }
            "set" => {
                bucket.set(&input.key, input.value.as_bytes())?;
                Ok(json!({ "key": input.key, "set": true }).into())
            }
            "set_then_hang" => {
                bucket.set(&input.key, input.value.as_bytes())?;
                std::fs::write("/workspace/committed", input.key.as_bytes())?;
                loop {
                    std::hint::spin_loop();
                }
            }
            other => Err(ToolError::invalid_input(format!(
                "unknown action {other:?}: expected get, set or set_then_hang"
            ))),
        }
    }
}

export_tool!(KvProbe);
