//! Conformance fixture `test_missing_capability`: asks the client's model
//! (`toolhost:tool/ask`'s `sample`), which a 2026-07-28 request that did not
//! declare `sampling` must be refused for (-32021) instead of run without.

use toolhost_sdk::ask::{self, Request};
use toolhost_sdk::prelude::*;

struct MissingCapability;

impl Tool for MissingCapability {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Asks the client's model one question (needs sampling).";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let request = Request::text("Answer with one word: ready?", 10);
        let sample = ask::sample(&request).map_err(ToolError::Failed)?;
        Ok(format!("The model said: {}", sample.text().unwrap_or("(not text)")).into())
    }
}

export_tool!(MissingCapability);
