//! Test guest: stores a value of the requested size in the `default` bucket
//! (the host's value-size limit must refuse oversized ones).

use toolhost_sdk::kv::Bucket;
use toolhost_sdk::prelude::*;

/// How big a value.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// Size of the value in bytes.
    bytes: usize,
}

struct KvBig;

impl Tool for KvBig {
    type Input = Input;
    const DESCRIPTION: &'static str =
        "Stores `bytes` bytes under the key `big` in the bucket `default`.";

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let bucket = Bucket::open("default")?;
        bucket.set("big", vec![b'x'; input.bytes])?;
        Ok(json!({ "key": "big", "bytes": input.bytes }).into())
    }
}

export_tool!(KvBig);
