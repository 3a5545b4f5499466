//! Conformance fixture `test_embedded_resource`: a text document, which MCP
//! clients receive as an embedded text resource.

use toolhost_sdk::prelude::*;

struct EmbeddedResource;

impl Tool for EmbeddedResource {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Returns a plain-text document as an embedded resource.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        Ok(Output::new().with_document(
            "text/plain",
            "This is an embedded resource content.",
            Some("embedded-resource".into()),
        ))
    }
}

export_tool!(EmbeddedResource);
