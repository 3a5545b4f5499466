//! `counter`: a named counter kept in the `default` key-value bucket.

use toolhost_sdk::kv::Bucket;
use toolhost_sdk::prelude::*;

/// Which counter to bump, and by how much.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The counter's name (its key in the bucket).
    #[schemars(length(min = 1, max = 256))]
    name: String,
    /// How much to add; negative to subtract.
    #[serde(default = "one")]
    by: i64,
}

fn one() -> i64 {
    1
}

struct Counter;

impl Tool for Counter {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Add to a named counter and return its new value. Counters start at 0
        and are shared by every session of this host.
    ";
    const HAS_DRY_RUN: bool = true;

    fn dry_run_result(input: &Input) -> Option<Output> {
        Some(json!({ "name": input.name, "value": null, "dryRun": true }).into())
    }

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let bucket = Bucket::open("default")?;
        let value = bucket.increment(&input.name, input.by)?;
        Ok(json!({ "name": input.name, "value": value }).into())
    }
}

export_tool!(Counter);
