//! Contract 0.1.0, frozen in `contract-0.1.0.wit`: its bindings, and its
//! types converted to and from the current ones. 0.2.0 only added content
//! blocks (audio, resource links), so every 0.1.0 value has a current
//! equivalent. The capabilities implement its `log` and `progress` beside
//! the current ones (`caps::log`, `caps::progress`).

use super::types;

wasmtime::component::bindgen!({
    path: "src/bindings/contract-0.1.0.wit",
    world: "toolhost:tool/contract",
    exports: { default: async },
});

use self::toolhost::tool::types as old;

impl From<old::Effect> for types::Effect {
    fn from(effect: old::Effect) -> Self {
        match effect {
            old::Effect::Read => Self::Read,
            old::Effect::Idempotent => Self::Idempotent,
            old::Effect::Write => Self::Write,
        }
    }
}

impl From<old::ToolMetadata> for types::ToolMetadata {
    fn from(old: old::ToolMetadata) -> Self {
        Self {
            description: old.description,
            input_schema: old.input_schema,
            output_schema: old.output_schema,
            effect: match old.effect {
                old::EffectDeclaration::Fixed(effect) => {
                    types::EffectDeclaration::Fixed(effect.into())
                }
                old::EffectDeclaration::ByInput => types::EffectDeclaration::ByInput,
            },
            time_args: old.time_args,
            has_dry_run_result: old.has_dry_run_result,
        }
    }
}

impl From<old::Blob> for types::Blob {
    fn from(old: old::Blob) -> Self {
        Self {
            media_type: old.media_type,
            data: old.data,
        }
    }
}

impl From<old::ContentBlock> for types::ContentBlock {
    fn from(old: old::ContentBlock) -> Self {
        match old {
            old::ContentBlock::Text(text) => Self::Text(text),
            old::ContentBlock::Json(json) => Self::Json(json),
            old::ContentBlock::Image(blob) => Self::Image(blob.into()),
            old::ContentBlock::Document(document) => Self::Document(types::Document {
                body: document.body.into(),
                name: document.name,
                uri: None,
            }),
            old::ContentBlock::SearchResult(hit) => Self::SearchResult(types::SearchResult {
                source: hit.source,
                title: hit.title,
                text: hit.text,
            }),
        }
    }
}

impl From<old::ToolOutput> for types::ToolOutput {
    fn from(old: old::ToolOutput) -> Self {
        Self {
            content: old.content.into_iter().map(Into::into).collect(),
            structured: old.structured,
            is_error: old.is_error,
        }
    }
}

impl From<old::ToolError> for types::ToolError {
    fn from(old: old::ToolError) -> Self {
        match old {
            old::ToolError::InvalidInput(message) => Self::InvalidInput(message),
            old::ToolError::Transient(message) => Self::Transient(message),
            old::ToolError::Failed(message) => Self::Failed(message),
        }
    }
}

impl From<types::CallContext> for old::CallContext {
    fn from(ctx: types::CallContext) -> Self {
        let session = ctx.session;
        Self {
            call_id: ctx.call_id,
            attempt: ctx.attempt,
            session: old::SessionInfo {
                id: session.id,
                channel: session.channel,
                mode: match session.mode {
                    types::SessionMode::Live => old::SessionMode::Live,
                    types::SessionMode::DryRun => old::SessionMode::DryRun,
                },
                auth: session.auth,
            },
            approved_by: ctx.approved_by,
            as_of: ctx.as_of,
        }
    }
}
