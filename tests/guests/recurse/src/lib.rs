//! Test guest: recurses without bound (stack overflow must trap cleanly).

use toolhost_sdk::prelude::*;

/// Uses stack on both the wasm stack and the linear-memory shadow stack.
#[inline(never)]
fn descend(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth as u8; 256]);
    if depth == u64::MAX {
        return u64::from(frame[0]);
    }
    descend(depth + 1).wrapping_add(u64::from(std::hint::black_box(frame)[1]))
}

struct Recurse;

impl Tool for Recurse {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Recurses until the stack overflows.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok(descend(0).to_string().into())
    }
}

export_tool!(Recurse);
