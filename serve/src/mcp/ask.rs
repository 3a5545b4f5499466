//! A running call's questions over MCP: `elicit` is `elicitation/create`
//! and `sample` is `sampling/createMessage`, asked of the client that made
//! the call when it declared the capability: as requests of the server's
//! own in a session (up to 2025-11-25), as input-required rounds from
//! 2026-07-28 ([`super::rounds`]). A client that did not declare it gets
//! the question refused, and from 2026-07-28 (where a server must not rely
//! on an undeclared capability) the whole request.

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks sampling deprecated (SEP-2577): 2026-07-28 deprecates it and \
              still defines it, and sessions up to 2025-11-25 have it"
)]

use base64::Engine as _;
use futures::future::BoxFuture;
use rmcp::model::{
    AudioContent, ClientCapabilities, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitationAction, ElicitationSchema, ImageContent, ModelHint,
    ModelPreferences, Role, SamplingMessage, SamplingMessageContentBlock, TextContent,
};

use toolhost::ask::{
    AskError, Asker, ElicitAnswer, Elicitation, Sampling, SamplingContent, SamplingResult,
};
use toolhost::prompts;

use super::rounds::Via;

/// Asks the MCP client that made the call.
pub struct ClientAsker {
    /// How the client is asked.
    pub via: Via,
    /// Whether it declared elicitation.
    pub can_elicit: bool,
    /// Whether it declared sampling.
    pub can_sample: bool,
}

impl Asker for ClientAsker {
    fn elicit<'a>(
        &'a self,
        question: &'a Elicitation,
    ) -> BoxFuture<'a, Result<ElicitAnswer, AskError>> {
        Box::pin(async move {
            if !self.can_elicit {
                let required = ClientCapabilities::builder().enable_elicitation().build();
                let refusal =
                    "this MCP client cannot ask its user (it did not declare elicitation)";
                return Err(AskError::Unavailable(
                    self.via.undeclared(required, refusal).await,
                ));
            }
            let schema = ElicitationSchema::from_json_schema(question.requested_schema.clone())
                .map_err(|e| AskError::Unavailable(format!("the form cannot be sent: {e}")))?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: question.message.clone(),
                requested_schema: schema,
            };
            let answer = self.via.elicit(params).await.map_err(AskError::Failed)?;
            Ok(match answer.action {
                ElicitationAction::Accept => {
                    ElicitAnswer::Accept(answer.content.map(object).unwrap_or_default())
                }
                ElicitationAction::Decline => ElicitAnswer::Decline,
                ElicitationAction::Cancel => ElicitAnswer::Cancel,
                other => {
                    return Err(AskError::Failed(format!(
                        "the client answered with an action this server does not know: {other:?}"
                    )));
                }
            })
        })
    }

    fn sample<'a>(
        &'a self,
        question: &'a Sampling,
    ) -> BoxFuture<'a, Result<SamplingResult, AskError>> {
        Box::pin(async move {
            if !self.can_sample {
                let required = ClientCapabilities::builder().enable_sampling().build();
                let refusal =
                    "this MCP client cannot sample from its model (it did not declare sampling)";
                return Err(AskError::Unavailable(
                    self.via.undeclared(required, refusal).await,
                ));
            }
            let messages = question
                .messages
                .iter()
                .map(|m| SamplingMessage::new(role(m.role), block(&m.content)))
                .collect();
            let options = &question.options;
            let mut params = CreateMessageRequestParams::new(messages, options.max_tokens);
            params.system_prompt = options.system_prompt.clone();
            params.temperature = options.temperature.map(|t| t as f32);
            params.stop_sequences =
                (!options.stop_sequences.is_empty()).then(|| options.stop_sequences.clone());
            params.model_preferences = options.model_preferences.as_ref().map(|p| {
                let mut mcp = ModelPreferences::new();
                mcp.hints = (!p.hints.is_empty()).then(|| {
                    p.hints
                        .iter()
                        .map(|name| ModelHint::new(name.clone()))
                        .collect()
                });
                mcp.cost_priority = p.cost_priority.map(|v| v as f32);
                mcp.speed_priority = p.speed_priority.map(|v| v as f32);
                mcp.intelligence_priority = p.intelligence_priority.map(|v| v as f32);
                mcp
            });
            let answer = self.via.sample(params).await.map_err(AskError::Failed)?;
            result(answer)
        })
    }
}

fn object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

fn role(role: prompts::Role) -> Role {
    match role {
        prompts::Role::User => Role::User,
        prompts::Role::Assistant => Role::Assistant,
    }
}

fn block(content: &SamplingContent) -> SamplingMessageContentBlock {
    let base64 = |data: &[u8]| base64::engine::general_purpose::STANDARD.encode(data);
    match content {
        SamplingContent::Text { text } => SamplingMessageContentBlock::text(text.clone()),
        SamplingContent::Image { media_type, data } => {
            SamplingMessageContentBlock::Image(ImageContent::new(base64(data), media_type.clone()))
        }
        SamplingContent::Audio { media_type, data } => {
            SamplingMessageContentBlock::Audio(AudioContent::new(base64(data), media_type.clone()))
        }
    }
}

/// The client's answer in the host's terms: one text, image or audio block.
fn result(answer: CreateMessageResult) -> Result<SamplingResult, AskError> {
    let decode = |data: &str| {
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| AskError::Failed(format!("the sample's data is not base64: {e}")))
    };
    let mut blocks = answer.message.content.into_vec();
    if blocks.len() != 1 {
        return Err(AskError::Failed(format!(
            "the sample holds {} content blocks; one text, image or audio block was expected",
            blocks.len()
        )));
    }
    let content = match blocks.remove(0) {
        SamplingMessageContentBlock::Text(TextContent { text, .. }) => {
            SamplingContent::Text { text }
        }
        SamplingMessageContentBlock::Image(image) => SamplingContent::Image {
            data: decode(&image.data)?,
            media_type: image.mime_type,
        },
        SamplingMessageContentBlock::Audio(audio) => SamplingContent::Audio {
            data: decode(&audio.data)?,
            media_type: audio.mime_type,
        },
        _ => {
            return Err(AskError::Failed(
                "the sample is a tool use or result; text, an image or audio was expected".into(),
            ));
        }
    };
    Ok(SamplingResult {
        role: match answer.message.role {
            Role::User => prompts::Role::User,
            Role::Assistant => prompts::Role::Assistant,
        },
        content,
        model: answer.model,
        stop_reason: answer.stop_reason,
    })
}
