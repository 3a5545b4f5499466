//! Test guest: stores a value of the requested size in the `default` bucket
//! (the host's value-size limit must refuse oversized ones).

use toolhost_sdk::kv::Bucket;
use toolhost_sdk::prelude::*;

/// How big a value.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// Size of the value in bytes.
    bytes: usize,
    /// The key to set (default `big`).
    #[serde(default = "big")]
    key: String,
    /// The effect to declare for this call: `read` or `write` (default).
    #[serde(default)]
    effect: Option<String>,
}

fn big() -> String {
    "big".to_string()
}

struct KvBig;

impl Tool for KvBig {
    type Input = Input;
    const DESCRIPTION: &'static str = "Stores `bytes` bytes under `key` in the bucket `default`.";
    const EFFECT: EffectDecl = EffectDecl::ByInput;

    fn effect_for(input: &Input) -> Effect {
        match input.effect.as_deref() {
            Some("read") => Effect::Read,
            _ => Effect::Write,
        }
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let bucket = Bucket::open("default")?;
        bucket.set(&input.key, vec![b'x'; input.bytes])?;
        Ok(json!({ "key": input.key, "bytes": input.bytes }).into())
    }
}

export_tool!(KvBig);
