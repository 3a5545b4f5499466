//! Conformance fixture `test_input_required_result_sampling`: asks the
//! client's model one question and answers with what it said.

use toolhost_sdk::ask::{self, Request};
use toolhost_sdk::prelude::*;

struct InputRequiredSampling;

impl Tool for InputRequiredSampling {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks the client's model for the capital of France.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let request = Request::text("What is the capital of France?", 50);
        let sample = ask::sample(&request).map_err(ToolError::Failed)?;
        Ok(format!("The model said: {}", sample.text().unwrap_or("(not text)")).into())
    }
}

export_tool!(InputRequiredSampling);
