//! Conformance fixture `test_tool_with_logging`: three info lines, 50 ms
//! apart, while the call runs.

use std::time::Duration;

use toolhost_sdk::prelude::*;

struct ToolWithLogging;

impl Tool for ToolWithLogging {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Logs three lines at info level while it runs.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        toolhost_sdk::log::info("Tool execution started");
        std::thread::sleep(Duration::from_millis(50));
        toolhost_sdk::log::info("Tool processing data");
        std::thread::sleep(Duration::from_millis(50));
        toolhost_sdk::log::info("Tool execution completed");
        Ok("Logging test completed: three lines sent.".into())
    }
}

export_tool!(ToolWithLogging);
