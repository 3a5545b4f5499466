//! Conformance fixture `test_multiple_content_types`: text, an image and a
//! JSON document in one result.

use toolhost_sdk::prelude::*;

struct MultipleContentTypes;

impl Tool for MultipleContentTypes {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Returns text, an image and a JSON document.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok(Output::text("Multiple content types test:")
            .with_image("image/png", include_bytes!("../../../red-pixel.png"))
            .with_document(
                "application/json",
                r#"{"test":"data","value":123}"#,
                Some("mixed-content-resource".into()),
            ))
    }
}

export_tool!(MultipleContentTypes);
