//! Conformance fixture `test_logging_tool`: one line at each of the four
//! levels a tool logs at, so a request that names no log level (2026-07-28)
//! shows that none reaches the client.

use toolhost_sdk::prelude::*;

struct LoggingTool;

impl Tool for LoggingTool {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Logs one line at each level: debug, info, warn, error.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        toolhost_sdk::log::debug("a debug line");
        toolhost_sdk::log::info("an info line");
        toolhost_sdk::log::warn("a warning line");
        toolhost_sdk::log::error("an error line");
        Ok("Logged four lines.".into())
    }
}

export_tool!(LoggingTool);
