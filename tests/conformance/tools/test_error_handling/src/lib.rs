//! Conformance fixture `test_error_handling`: every call fails.

use toolhost_sdk::prelude::*;

struct ErrorHandling;

impl Tool for ErrorHandling {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Always fails, to test error reporting.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Err(ToolError::failed(
            "This tool intentionally returns an error for testing",
        ))
    }
}

export_tool!(ErrorHandling);
