//! Conformance fixture `test_image_content`: one PNG image block.

use toolhost_sdk::prelude::*;

struct ImageContent;

impl Tool for ImageContent {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Returns a 1x1 red PNG image.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok(Output::new().with_image("image/png", include_bytes!("../../../red-pixel.png")))
    }
}

export_tool!(ImageContent);
