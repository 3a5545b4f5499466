//! Conformance fixture `failing_job` (Tasks extension): every call is a task
//! (`task = "required"`) that reports an error after about a second: the
//! task is `completed` with `isError`.

use std::time::Duration;

use toolhost_sdk::prelude::*;

struct FailingJob;

impl Tool for FailingJob {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Works for a second, then reports an error.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        std::thread::sleep(Duration::from_secs(1));
        Err(ToolError::Failed(
            "the job failed, as it always does".into(),
        ))
    }
}

export_tool!(FailingJob);
