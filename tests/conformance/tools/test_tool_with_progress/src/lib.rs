//! Conformance fixture `test_tool_with_progress`: reports 0, 50 and 100 of
//! 100, 50 ms apart.

use std::time::Duration;

use toolhost_sdk::prelude::*;

struct ToolWithProgress;

impl Tool for ToolWithProgress {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Reports progress 0, 50 and 100 of 100 while it runs.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        for (step, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if step > 0 {
                std::thread::sleep(Duration::from_millis(50));
            }
            toolhost_sdk::progress::report(done, Some(100.0), None);
        }
        Ok("Progress test completed.".into())
    }
}

export_tool!(ToolWithProgress);
