//! Test guest: allocates and touches memory without bound (the memory cap
//! must stop it).

use toolhost_sdk::prelude::*;

struct Hog;

impl Tool for Hog {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Allocates memory until it runs out.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        loop {
            let mut chunk = vec![0u8; 1 << 20];
            // Touch every page so the memory is really used.
            for byte in chunk.iter_mut().step_by(4096) {
                *byte = 1;
            }
            chunks.push(std::hint::black_box(chunk));
        }
    }
}

export_tool!(Hog);
