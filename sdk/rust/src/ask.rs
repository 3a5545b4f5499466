//! Ask the person using the client ([`elicit`]), the client's model
//! ([`sample`]) or the client for its [`roots`] during a call, or several
//! of these at once under names of the tool's ([`ask_all`])
//! (`toolhost:tool/ask`).
//!
//! The operator grants each: `ask = ["user", "model", "roots"]` in the tool's
//! `[tools.<name>]`. Over MCP the host asks the client that made the call
//! (when it declared elicitation or sampling); over the HTTP API the
//! application answers an event; elsewhere the question is refused. The
//! call's timeout stops while it waits; the wait has its own limit
//! (`[limits] ask_timeout_ms`, 10 minutes unless set).
//!
//! ```no_run
//! use toolhost_sdk::ask::{self, Answer, Sample};
//! use toolhost_sdk::serde_json::json;
//!
//! let form = json!({
//!     "type": "object",
//!     "properties": {"name": {"type": "string", "title": "Your name"}},
//!     "required": ["name"],
//! });
//! match ask::elicit("Who is asking?", &form) {
//!     Ok(Answer::Accept(content)) => println!("hello {}", content["name"]),
//!     Ok(_) => println!("no answer"),
//!     Err(refused) => println!("cannot ask: {refused}"),
//! }
//! let summary: Result<Sample, String> = ask::sample(&ask::Request::text("Summarise: …", 200));
//!
//! // Both at once: an MCP 2026-07-28 client answers them in one round.
//! let replies = ask::ask_all(&[
//!     ("user_name", ask::Question::User { message: "Who is asking?".into(), schema: form }),
//!     ("client_roots", ask::Question::Roots),
//! ]);
//! ```

use serde_json::{Map, Value};

use crate::bindings::toolhost::tool::ask as wit;
use crate::bindings::toolhost::tool::types::Blob;

/// What the user did with a question.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Filled the form in: its content, checked by the host against the form.
    Accept(Map<String, Value>),
    /// Said no.
    Decline,
    /// Dismissed the question.
    Cancel,
}

/// Ask the user `message` with a form: `schema` is a flat object schema
/// (properties of type string, number, integer, boolean, or an array of
/// choices; see the contract). The error is the host's refusal.
pub fn elicit(message: &str, schema: &Value) -> Result<Answer, String> {
    answer_from_wit(wit::elicit(message, &schema.to_string())?)
}

fn answer_from_wit(answer: wit::ElicitAnswer) -> Result<Answer, String> {
    Ok(match answer {
        wit::ElicitAnswer::Accept(text) => match serde_json::from_str(&text) {
            Ok(Value::Object(content)) => Answer::Accept(content),
            _ => {
                return Err(format!(
                    "the host sent an answer that is not an object: {text}"
                ));
            }
        },
        wit::ElicitAnswer::Decline => Answer::Decline,
        wit::ElicitAnswer::Cancel => Answer::Cancel,
    })
}

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// What a message says.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// Text.
    Text(String),
    /// An image: its media type and bytes.
    Image(String, Vec<u8>),
    /// Audio: its media type and bytes.
    Audio(String, Vec<u8>),
}

/// A request to the client's model: the conversation and how to sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The conversation so far, as `(who, what)`.
    pub messages: Vec<(Role, Content)>,
    /// The most tokens to sample.
    pub max_tokens: u32,
    /// A system prompt the client may use.
    pub system_prompt: Option<String>,
    /// The sampling temperature.
    pub temperature: Option<f64>,
    /// Sequences that end the sample.
    pub stop_sequences: Vec<String>,
    /// Model names or families the client should prefer, best first.
    pub model_hints: Vec<String>,
}

impl Request {
    /// One user message of text, at most `max_tokens` back.
    pub fn text(prompt: impl Into<String>, max_tokens: u32) -> Self {
        Self {
            messages: vec![(Role::User, Content::Text(prompt.into()))],
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: Vec::new(),
            model_hints: Vec::new(),
        }
    }

    /// The same request with a system prompt.
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }
}

/// What the client's model said.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Who says it (the model, as a rule).
    pub role: Role,
    /// What it says.
    pub content: Content,
    /// The model that answered.
    pub model: String,
    /// Why it stopped (`endTurn`, `maxTokens`, …).
    pub stop_reason: Option<String>,
}

impl Sample {
    /// The text it said, when it said text.
    pub fn text(&self) -> Option<&str> {
        match &self.content {
            Content::Text(text) => Some(text),
            _ => None,
        }
    }
}

/// Ask the client's model to continue `request`'s conversation. The error
/// is the host's refusal.
pub fn sample(request: &Request) -> Result<Sample, String> {
    let (messages, options) = request_to_wit(request);
    Ok(sample_from_wit(wit::sample(&messages, &options)?))
}

/// A folder or file the user works in, as the client names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Where it is: a `file://` URI.
    pub uri: String,
    /// A name for people.
    pub name: Option<String>,
}

/// Ask the client for its roots: the folders and files the user works in
/// (granted as `"roots"`). Asked under the key `roots`.
pub fn roots() -> Result<Vec<Root>, String> {
    match ask_all(&[("roots", Question::Roots)])?.pop() {
        Some(Reply::Roots(roots)) => Ok(roots),
        _ => Err("the host answered the roots with something else".into()),
    }
}

/// One question of [`ask_all`].
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// For the user, as [`elicit`] asks.
    User {
        /// What to ask.
        message: String,
        /// The form.
        schema: Value,
    },
    /// For the client's model, as [`sample`] asks.
    Model(Request),
    /// For the client's roots, as [`roots`] asks.
    Roots,
}

/// The answer to one question of [`ask_all`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The user's.
    User(Answer),
    /// The model's.
    Model(Sample),
    /// The client's roots.
    Roots(Vec<Root>),
}

/// Ask 1 to 8 `questions` at once, each under a key of the tool's (1-64
/// characters of A-Z, a-z, 0-9, `_`, `-` and `.`, unique), and get the
/// replies in the order asked. An MCP 2026-07-28 client sees the keys and
/// is asked all in one round; a request that answers a key when it
/// arrives has that question answered at once. The error is the host's
/// refusal, naming the question.
pub fn ask_all(questions: &[(&str, Question)]) -> Result<Vec<Reply>, String> {
    let asked: Vec<wit::KeyedQuestion> = questions
        .iter()
        .map(|(key, question)| wit::KeyedQuestion {
            key: key.to_string(),
            question: match question {
                Question::User { message, schema } => wit::Question::User(wit::FormQuestion {
                    message: message.clone(),
                    requested_schema: schema.to_string(),
                }),
                Question::Model(request) => {
                    let (messages, options) = request_to_wit(request);
                    wit::Question::Model(wit::SamplingQuestion { messages, options })
                }
                Question::Roots => wit::Question::Roots,
            },
        })
        .collect();
    wit::ask_all(&asked)?
        .into_iter()
        .map(|answer| {
            Ok(match answer {
                wit::Answer::User(answer) => Reply::User(answer_from_wit(answer)?),
                wit::Answer::Model(result) => Reply::Model(sample_from_wit(result)),
                wit::Answer::Roots(roots) => Reply::Roots(
                    roots
                        .into_iter()
                        .map(|root| Root {
                            uri: root.uri,
                            name: root.name,
                        })
                        .collect(),
                ),
            })
        })
        .collect()
}

fn request_to_wit(request: &Request) -> (Vec<wit::SamplingMessage>, wit::SamplingOptions) {
    let messages: Vec<wit::SamplingMessage> = request
        .messages
        .iter()
        .map(|(role, content)| wit::SamplingMessage {
            role: role_to_wit(*role),
            content: content_to_wit(content.clone()),
        })
        .collect();
    let options = wit::SamplingOptions {
        system_prompt: request.system_prompt.clone(),
        max_tokens: request.max_tokens,
        temperature: request.temperature,
        stop_sequences: request.stop_sequences.clone(),
        model_preferences: (!request.model_hints.is_empty()).then(|| wit::ModelPreferences {
            hints: request.model_hints.clone(),
            cost_priority: None,
            speed_priority: None,
            intelligence_priority: None,
        }),
    };
    (messages, options)
}

fn sample_from_wit(result: wit::SamplingResult) -> Sample {
    Sample {
        role: match result.role {
            wit::Role::User => Role::User,
            wit::Role::Assistant => Role::Assistant,
        },
        content: match result.content {
            wit::SamplingContent::Text(text) => Content::Text(text),
            wit::SamplingContent::Image(blob) => Content::Image(blob.media_type, blob.data),
            wit::SamplingContent::Audio(blob) => Content::Audio(blob.media_type, blob.data),
        },
        model: result.model,
        stop_reason: result.stop_reason,
    }
}

fn role_to_wit(role: Role) -> wit::Role {
    match role {
        Role::User => wit::Role::User,
        Role::Assistant => wit::Role::Assistant,
    }
}

fn content_to_wit(content: Content) -> wit::SamplingContent {
    match content {
        Content::Text(text) => wit::SamplingContent::Text(text),
        Content::Image(media_type, data) => wit::SamplingContent::Image(Blob { media_type, data }),
        Content::Audio(media_type, data) => wit::SamplingContent::Audio(Blob { media_type, data }),
    }
}
