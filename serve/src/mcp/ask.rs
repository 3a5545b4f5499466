//! A running call's questions over MCP: `elicit` is `elicitation/create`,
//! `sample` is `sampling/createMessage` and a question for the roots is
//! `roots/list`, asked of the client that made the call when it declared
//! the capability: as requests of the server's own in a session (up to
//! 2025-11-25; `ask-all`'s one after another), as input-required rounds
//! from 2026-07-28 ([`super::rounds`]; `ask-all`'s in one round, under the
//! tool's keys). A client that did not declare one gets the question
//! refused, and from 2026-07-28 (where a server must not rely on an
//! undeclared capability) the whole request.

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks sampling deprecated (SEP-2577): 2026-07-28 deprecates it and \
              still defines it, and sessions up to 2025-11-25 have it"
)]

use base64::Engine as _;
use futures::future::BoxFuture;
use std::collections::BTreeMap;

use rmcp::model::{
    AudioContent, ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ElicitationSchema, ImageContent, InputRequest, ListRootsRequest,
    ListRootsResult, ModelHint, ModelPreferences, Role, RootsCapabilities, SamplingCapability,
    SamplingMessage, SamplingMessageContentBlock, TextContent,
};
use serde::de::DeserializeOwned;

use toolhost::ask::{
    Answer, AskError, Asker, ElicitAnswer, Elicitation, KeyedQuestion, Question, Root,
    RootsRequest, Sampling, SamplingContent, SamplingResult,
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
    /// Whether it declared roots.
    pub can_list_roots: bool,
}

const CANNOT_ELICIT: &str = "this MCP client cannot ask its user (it did not declare elicitation)";
const CANNOT_SAMPLE: &str =
    "this MCP client cannot sample from its model (it did not declare sampling)";
const CANNOT_LIST_ROOTS: &str = "this MCP client has no roots to list (it did not declare roots)";

impl ClientAsker {
    /// What the client must declare to be asked `questions` that it did
    /// not, and why not, or nothing when it can be asked them all.
    fn missing<'a>(
        &self,
        questions: impl IntoIterator<Item = &'a Question>,
    ) -> Option<(ClientCapabilities, &'static str)> {
        let mut required = ClientCapabilities::default();
        let mut refusal = None;
        for question in questions {
            match question {
                Question::Elicitation(_) if !self.can_elicit => {
                    required.elicitation = Some(ElicitationCapability::default());
                    refusal.get_or_insert(CANNOT_ELICIT);
                }
                Question::Sampling(_) if !self.can_sample => {
                    required.sampling = Some(SamplingCapability::default());
                    refusal.get_or_insert(CANNOT_SAMPLE);
                }
                Question::Roots(_) if !self.can_list_roots => {
                    required.roots = Some(RootsCapabilities::default());
                    refusal.get_or_insert(CANNOT_LIST_ROOTS);
                }
                _ => {}
            }
        }
        refusal.map(|refusal| (required, refusal))
    }

    /// Refuse `questions` the client cannot be asked; a 2026-07-28 request
    /// ends there instead.
    async fn check<'a>(
        &self,
        questions: impl IntoIterator<Item = &'a Question>,
    ) -> Result<(), AskError> {
        match self.missing(questions) {
            Some((required, refusal)) => Err(AskError::Unavailable(
                self.via.undeclared(required, refusal).await,
            )),
            None => Ok(()),
        }
    }
}

impl Asker for ClientAsker {
    fn elicit<'a>(
        &'a self,
        question: &'a Elicitation,
    ) -> BoxFuture<'a, Result<ElicitAnswer, AskError>> {
        Box::pin(async move {
            let asked = Question::Elicitation(question.clone());
            self.check([&asked]).await?;
            let answer = self
                .via
                .elicit(elicit_params(question)?)
                .await
                .map_err(AskError::Failed)?;
            elicit_answer(answer)
        })
    }

    fn sample<'a>(
        &'a self,
        question: &'a Sampling,
    ) -> BoxFuture<'a, Result<SamplingResult, AskError>> {
        Box::pin(async move {
            let asked = Question::Sampling(question.clone());
            self.check([&asked]).await?;
            let answer = self
                .via
                .sample(sampling_params(question))
                .await
                .map_err(AskError::Failed)?;
            result(answer)
        })
    }

    fn roots<'a>(
        &'a self,
        question: &'a RootsRequest,
    ) -> BoxFuture<'a, Result<Vec<Root>, AskError>> {
        Box::pin(async move {
            self.check([&Question::Roots(question.clone())]).await?;
            let answer = self.via.roots().await.map_err(AskError::Failed)?;
            Ok(roots(answer))
        })
    }

    fn ask_all<'a>(
        &'a self,
        questions: &'a [KeyedQuestion],
    ) -> BoxFuture<'a, Result<Vec<Answer>, AskError>> {
        Box::pin(async move {
            let super::rounds::Via::Rounds(rounds) = &self.via else {
                return toolhost::ask::one_by_one(self, questions).await;
            };
            self.check(questions.iter().map(|q| &q.question)).await?;
            let mut requests = BTreeMap::new();
            for keyed in questions {
                let request = match &keyed.question {
                    Question::Elicitation(q) => {
                        InputRequest::Elicitation(ElicitRequest::new(elicit_params(q)?))
                    }
                    Question::Sampling(q) => {
                        InputRequest::CreateMessage(CreateMessageRequest::new(sampling_params(q)))
                    }
                    Question::Roots(_) => InputRequest::ListRoots(ListRootsRequest::default()),
                };
                requests.insert(keyed.key.clone(), request);
            }
            let mut answers = rounds.ask_named(requests).await.map_err(AskError::Failed)?;
            questions
                .iter()
                .map(|keyed| {
                    let answer = answers.remove(&keyed.key).ok_or_else(|| {
                        AskError::Failed(format!("no answer came for `{}`", keyed.key))
                    })?;
                    let named = |e: AskError| match e {
                        AskError::Failed(e) => AskError::Failed(format!("`{}`: {e}", keyed.key)),
                        other => other,
                    };
                    Ok(match &keyed.question {
                        Question::Elicitation(_) => Answer::Elicitation(
                            parse(answer).and_then(elicit_answer).map_err(named)?,
                        ),
                        Question::Sampling(_) => {
                            Answer::Sampling(parse(answer).and_then(result).map_err(named)?)
                        }
                        Question::Roots(_) => {
                            Answer::Roots(parse(answer).map(roots).map_err(named)?)
                        }
                    })
                })
                .collect()
        })
    }
}

/// A client's answer of the shape `T`.
fn parse<T: DeserializeOwned>(answer: serde_json::Value) -> Result<T, AskError> {
    serde_json::from_value(answer).map_err(|e| {
        AskError::Failed(format!(
            "the answer is not a {}: {e}",
            std::any::type_name::<T>()
                .rsplit("::")
                .next()
                .unwrap_or("result")
        ))
    })
}

fn elicit_params(question: &Elicitation) -> Result<ElicitRequestParams, AskError> {
    let schema = ElicitationSchema::from_json_schema(question.requested_schema.clone())
        .map_err(|e| AskError::Unavailable(format!("the form cannot be sent: {e}")))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.message.clone(),
        requested_schema: schema,
    })
}

fn elicit_answer(answer: ElicitResult) -> Result<ElicitAnswer, AskError> {
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
}

fn sampling_params(question: &Sampling) -> CreateMessageRequestParams {
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
    params
}

fn roots(answer: ListRootsResult) -> Vec<Root> {
    answer
        .roots
        .into_iter()
        .map(|root| Root {
            uri: root.uri,
            name: root.name,
        })
        .collect()
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
