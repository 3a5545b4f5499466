//! Test guest: a 5000-character description (over the 4096 limit), so the
//! tool must not load.

use toolhost_sdk::prelude::*;

const LEN: usize = 5000;

/// `LEN` characters: words of nine `a`s separated by spaces, ending in `a`.
const BYTES: [u8; LEN] = {
    let mut bytes = [b'a'; LEN];
    let mut i = 7;
    while i < LEN {
        bytes[i] = b' ';
        i += 10;
    }
    bytes
};

struct LongDescription;

impl Tool for LongDescription {
    type Input = NoInput;
    const DESCRIPTION: &'static str = match std::str::from_utf8(&BYTES) {
        Ok(text) => text,
        Err(_) => panic!("ASCII is UTF-8"),
    };
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok("unreachable: this tool should not load".into())
    }
}

export_tool!(LongDescription);
