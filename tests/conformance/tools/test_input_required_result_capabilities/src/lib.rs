//! Conformance fixture `test_input_required_result_capabilities`: asks the
//! client's model (the suite's client declares sampling and not
//! elicitation), so the input request it gets is for sampling only.

use toolhost_sdk::ask::{self, Request};
use toolhost_sdk::prelude::*;

struct InputRequiredCapabilities;

impl Tool for InputRequiredCapabilities {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks the client's model to say hello.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let sample = ask::sample(&Request::text("Say hello.", 20)).map_err(ToolError::Failed)?;
        Ok(format!("The model said: {}", sample.text().unwrap_or("(not text)")).into())
    }
}

export_tool!(InputRequiredCapabilities);
