//! Test guest: loops forever in `execute` (the deadline must stop it).

use toolhost_sdk::prelude::*;

struct Spin;

impl Tool for Spin {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Never returns.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let mut n = 0u64;
        loop {
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }
}

export_tool!(Spin);
