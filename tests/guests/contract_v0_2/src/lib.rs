//! Test guest: a tool built against contract 0.2.0, as tools compiled
//! before 0.2.1 were. It logs a line, reports progress and returns its
//! context and a 0.2.0 content block (audio).

wit_bindgen::generate!({
    path: "wit",
    world: "toolhost:tool/contract",
});

use exports::toolhost::tool::tool::Guest;
use toolhost::tool::types::{
    Blob, CallContext, ContentBlock, Effect, EffectDeclaration, ToolError, ToolMetadata, ToolOutput,
};
use toolhost::tool::{log, progress};

struct ContractV02;

impl Guest for ContractV02 {
    fn metadata() -> ToolMetadata {
        ToolMetadata {
            description: "A tool built against contract 0.2.0: returns text and audio.".into(),
            input_schema: None,
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

    fn execute(_input: String, ctx: CallContext) -> Result<ToolOutput, ToolError> {
        log::log(log::Level::Info, "0.2.0 contract, 0.2.1 host");
        progress::report(1.0, Some(1.0), None);
        Ok(ToolOutput {
            content: vec![
                ContentBlock::Text(format!("attempt {} of call {}", ctx.attempt, ctx.call_id)),
                ContentBlock::Audio(Blob {
                    media_type: "audio/wav".into(),
                    data: b"RIFF".to_vec(),
                }),
            ],
            structured: None,
            is_error: false,
        })
    }
}

export!(ContractV02);
