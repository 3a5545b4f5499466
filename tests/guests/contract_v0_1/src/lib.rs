//! Test guest: a tool built against contract 0.1.0, as tools compiled
//! before 0.2.0 were. It logs a line, reports progress, reads its context
//! and returns every 0.1.0 content block.

wit_bindgen::generate!({
    path: "../../../host/src/bindings/contract-0.1.0.wit",
    world: "toolhost:tool/contract",
});

use exports::toolhost::tool::tool::Guest;
use toolhost::tool::types::{
    Blob, CallContext, ContentBlock, Document, Effect, EffectDeclaration, SearchResult, ToolError,
    ToolMetadata, ToolOutput,
};
use toolhost::tool::{log, progress};

struct ContractV01;

impl Guest for ContractV01 {
    fn metadata() -> ToolMetadata {
        ToolMetadata {
            description: "A tool built against contract 0.1.0: returns one block of each kind."
                .into(),
            input_schema: Some(
                r#"{"type":"object","properties":{"fail":{"type":"boolean"}}}"#.into(),
            ),
            output_schema: None,
            effect: EffectDeclaration::Fixed(Effect::Read),
            time_args: Vec::new(),
            has_dry_run_result: false,
        }
    }

    fn effect_for(_input: String) -> Effect {
        Effect::Read
    }

    fn dry_run_result(_input: String) -> Option<ToolOutput> {
        None
    }

    fn execute(input: String, ctx: CallContext) -> Result<ToolOutput, ToolError> {
        let compact: String = input.split_whitespace().collect();
        if compact.contains("\"fail\":true") {
            return Err(ToolError::InvalidInput("asked to fail".into()));
        }
        log::log(log::Level::Info, "old contract, new host");
        progress::report(1.0, Some(1.0), Some("all done"));
        Ok(ToolOutput {
            content: vec![
                ContentBlock::Text(format!("attempt {} of call {}", ctx.attempt, ctx.call_id)),
                ContentBlock::Json(r#"{"version":"0.1.0"}"#.into()),
                ContentBlock::Image(Blob {
                    media_type: "image/png".into(),
                    data: vec![0x89, b'P', b'N', b'G'],
                }),
                ContentBlock::Document(Document {
                    body: Blob {
                        media_type: "text/plain".into(),
                        data: b"a document".to_vec(),
                    },
                    name: Some("notes.txt".into()),
                }),
                ContentBlock::SearchResult(SearchResult {
                    source: "docs/a.md".into(),
                    title: "A".into(),
                    text: "a hit".into(),
                }),
            ],
            structured: None,
            is_error: false,
        })
    }
}

export!(ContractV01);
