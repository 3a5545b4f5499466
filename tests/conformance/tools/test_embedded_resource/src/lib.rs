//! Conformance fixture `test_embedded_resource`: a text document with its
//! own URI, which MCP clients receive as an embedded text resource.

use toolhost_sdk::prelude::*;

struct EmbeddedResource;

impl Tool for EmbeddedResource {
    type Input = NoInput;
    const DESCRIPTION: &'static str = "Returns a plain-text document as an embedded resource.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(_input: NoInput, _ctx: &CallContext) -> Result<Output, ToolError> {
        let mut output = Output::new();
        output.content.push(Content::Document {
            media_type: "text/plain".into(),
            data: b"This is an embedded resource content.".to_vec(),
            name: None,
            uri: Some("test://embedded-resource".into()),
        });
        Ok(output)
    }
}

export_tool!(EmbeddedResource);
