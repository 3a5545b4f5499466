//! Test guest: panics in `execute` (a trap).

use toolhost_sdk::prelude::*;

struct Trap;

impl Tool for Trap {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Panics when called.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        panic!("trap guest panicked on purpose")
    }
}

export_tool!(Trap);
