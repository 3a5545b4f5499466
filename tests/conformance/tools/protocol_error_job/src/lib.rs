//! Conformance fixture `protocol_error_job` (Tasks extension): every call
//! is a task (`task = "required"`) whose tool traps: it never answers, so
//! the task is `failed` with an error.

use toolhost_sdk::prelude::*;

struct ProtocolErrorJob;

impl Tool for ProtocolErrorJob {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Traps instead of answering.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        panic!("the job trapped, as it always does")
    }
}

export_tool!(ProtocolErrorJob);
