//! `toolhost:tool/ask`: a running call asks the person using the client
//! (`elicit`) or the client's model (`sample`).
//!
//! GrantCtx per tool (`ask = ["user", "model"]`); the check is here, and a
//! refusal is an error the guest sees. The question goes to the surface's
//! [`Asker`]. While the call waits its deadline stops (it goes on from
//! where it was after), the wait has its own limit (`ask_timeout_ms`), and
//! only `max_asking_calls` calls host-wide may wait at once: a call that
//! would be one more is refused at once, so the slots of people who take
//! their time cannot starve everyone else. What goes out is bounded by the
//! tool's `max_output_bytes`, what comes back by its `max_input_bytes`;
//! an accepted form is checked against the form asked.

use std::collections::BTreeSet;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Semaphore;

use super::log::TraceLog;
use super::{CallScope, Capability, Grants, OUTSIDE_A_CALL, Outside};
use crate::ask::{
    self, AskError, Asker, ElicitAnswer, Elicitation, MAX_SAMPLING_MESSAGES, ModelPreferences,
    Sampling, SamplingContent, SamplingMessage, SamplingOptions, SamplingResult,
};
use crate::bindings::toolhost::tool::ask as wit;
use crate::bindings::types::Blob;
use crate::deadline::Deadline;
use crate::prompts::Role;

/// The most questions one call may ask.
pub const MAX_QUESTIONS_PER_CALL: u32 = 16;
/// The most stop sequences, and model hints, a sampling request may hold.
pub const MAX_SAMPLING_LIST: usize = 16;

/// Whom a tool may ask during a call (`ask`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Asked {
    /// The person using the client (MCP elicitation).
    User,
    /// The client's model (MCP sampling).
    Model,
}

impl std::fmt::Display for Asked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::User => "user",
            Self::Model => "model",
        })
    }
}

/// The lock's entry for a grant to ask `whom`: their names, sorted.
pub fn lock_entry(whom: &BTreeSet<Asked>) -> Vec<String> {
    whom.iter().map(ToString::to_string).collect()
}

/// What one call may ask, and whom through.
#[derive(Clone)]
pub struct AskCtx {
    allowed: Result<Arc<Asking>, &'static str>,
}

/// A call's setting for its questions, and what it has asked so far.
struct Asking {
    allowed: Allowed,
    /// Questions asked.
    asked: std::sync::atomic::AtomicU32,
    /// What is left of the call's waiting time: one `ask_timeout` for all
    /// its questions together, so a tool asking again and again still
    /// ends.
    wait_left: std::sync::Mutex<Duration>,
}

/// A call's setting for its questions.
pub(crate) struct Allowed {
    /// Whom the tool was granted to ask.
    pub(crate) grant: BTreeSet<Asked>,
    /// The tool's name, for the question and the errors.
    pub(crate) tool: String,
    /// The call's id.
    pub(crate) call_id: String,
    /// The surface's way of asking.
    pub(crate) asker: Arc<dyn Asker>,
    /// The host's slots for waiting calls.
    pub(crate) waiting: AskingSlots,
    /// How long one question may wait.
    pub(crate) timeout: Duration,
    /// The call's deadline, stopped while it waits.
    pub(crate) deadline: Arc<Deadline>,
    /// The most bytes a question may send (`max_output_bytes`).
    pub(crate) question_bytes: usize,
    /// The most bytes an answer may bring (`max_input_bytes`).
    pub(crate) answer_bytes: usize,
    /// The call's trace, which records each question and how it ended.
    pub(crate) trace: TraceLog,
}

/// The host's slots for calls waiting for an answer. Cloning shares them.
#[derive(Clone, Debug)]
pub struct AskingSlots {
    slots: Arc<Semaphore>,
    cap: u32,
}

impl AskingSlots {
    /// `cap` slots (`max_asking_calls`).
    pub(crate) fn new(cap: u32) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(cap as usize)),
            cap,
        }
    }
}

/// The pipeline makes a call's context (it holds the surface's asker): an
/// instance takes its call's.
impl Capability for AskCtx {
    fn for_call(_: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        Ok(scope.ask.clone())
    }

    fn outside_a_call(_: &Outside<'_>) -> anyhow::Result<Self> {
        Ok(Self::refused(OUTSIDE_A_CALL))
    }
}

impl AskCtx {
    /// A call's: it may ask as `allowed` says.
    pub(crate) fn asking(allowed: Allowed) -> Self {
        let wait_left = std::sync::Mutex::new(allowed.timeout);
        Self {
            allowed: Ok(Arc::new(Asking {
                allowed,
                asked: std::sync::atomic::AtomicU32::new(0),
                wait_left,
            })),
        }
    }

    /// Every question refused, saying it is not asked `during` this.
    pub fn refused(during: &'static str) -> Self {
        Self {
            allowed: Err(during),
        }
    }

    fn allowed(&self, whom: Asked) -> Result<&Asking, String> {
        let asking = self
            .allowed
            .as_deref()
            .map_err(|during| format!("no question can be asked during {during}"))?;
        let allowed = &asking.allowed;
        if !allowed.grant.contains(&whom) {
            let tool = &allowed.tool;
            return Err(format!(
                "tool `{tool}` may not ask the {}: the operator grants it with \
                 `ask = [\"{whom}\"]` in [tools.{tool}] of toolhost.toml",
                if whom == Asked::User {
                    "user"
                } else {
                    "client's model"
                },
            ));
        }
        let asked = asking
            .asked
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if asked >= MAX_QUESTIONS_PER_CALL {
            return Err(format!(
                "this call asked {MAX_QUESTIONS_PER_CALL} questions already, the most a call may"
            ));
        }
        Ok(asking)
    }
}

impl std::ops::Deref for Asking {
    type Target = Allowed;

    fn deref(&self) -> &Allowed {
        &self.allowed
    }
}

impl Asking {
    /// Wait for `answer` with the deadline stopped, in a waiting slot, for
    /// at most what is left of the call's waiting time.
    async fn wait<T>(
        &self,
        answer: impl Future<Output = Result<T, AskError>>,
    ) -> Result<T, String> {
        let allowed = &self.allowed;
        let Ok(_slot) = allowed.waiting.slots.clone().try_acquire_owned() else {
            return Err(format!(
                "all {} of the host's slots for calls waiting for an answer are taken \
                 (max_asking_calls); ask again later",
                allowed.waiting.cap
            ));
        };
        let left = *self
            .wait_left
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if left.is_zero() {
            return Err(format!(
                "this call's questions waited {} ms already, the most a call's may \
                 (ask_timeout_ms)",
                allowed.timeout.as_millis()
            ));
        }
        let _paused = allowed.deadline.pause();
        let started = tokio::time::Instant::now();
        let answered = tokio::time::timeout(left, answer).await;
        {
            let mut wait_left = self
                .wait_left
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            *wait_left = wait_left.saturating_sub(started.elapsed());
        }
        match answered {
            Ok(answered) => answered.map_err(|e| e.to_string()),
            Err(_) => Err(format!(
                "no answer came within {} ms: a call's questions wait {} ms in all \
                 (ask_timeout_ms)",
                left.as_millis(),
                allowed.timeout.as_millis()
            )),
        }
    }

    async fn elicit(&self, message: String, form: String) -> Result<wit::ElicitAnswer, String> {
        if let Some(problem) = crate::tool::text_problem(&message) {
            return Err(format!("the message {problem}"));
        }
        let requested_schema = ask::check_form(&form)?;
        let validator = jsonschema::validator_for(&Value::Object(requested_schema.clone()))
            .map_err(|e| format!("the form does not compile: {e}"))?;
        let question = Elicitation {
            tool: self.tool.clone(),
            call_id: self.call_id.clone(),
            message,
            requested_schema,
        };
        self.trace
            .host(format!("asked the user: {}", shown(&question.message)));
        let answer = self.wait(self.asker.elicit(&question)).await;
        let answer = answer.inspect_err(|e| self.trace.host(format!("no answer: {e}")))?;
        Ok(match answer {
            ElicitAnswer::Accept(content) => {
                let content = Value::Object(content);
                if let Some(error) = validator.iter_errors(&content).next() {
                    self.trace.host("the answer did not fit the form");
                    return Err(format!(
                        "the answer does not fit the form at {:?}: {error}",
                        error.instance_path().to_string()
                    ));
                }
                let text = content.to_string();
                self.answer_fits(text.len())?;
                self.trace.host("the user answered");
                wit::ElicitAnswer::Accept(text)
            }
            ElicitAnswer::Decline => {
                self.trace.host("the user declined");
                wit::ElicitAnswer::Decline
            }
            ElicitAnswer::Cancel => {
                self.trace.host("the user cancelled");
                wit::ElicitAnswer::Cancel
            }
        })
    }

    async fn sample(
        &self,
        messages: Vec<wit::SamplingMessage>,
        options: wit::SamplingOptions,
    ) -> Result<wit::SamplingResult, String> {
        if messages.is_empty() || messages.len() > MAX_SAMPLING_MESSAGES {
            return Err(format!(
                "a sampling request holds 1 to {MAX_SAMPLING_MESSAGES} messages, not {}",
                messages.len()
            ));
        }
        let hints = options
            .model_preferences
            .as_ref()
            .map_or(&[][..], |p| p.hints.as_slice());
        if options.stop_sequences.len() > MAX_SAMPLING_LIST || hints.len() > MAX_SAMPLING_LIST {
            return Err(format!(
                "a sampling request holds at most {MAX_SAMPLING_LIST} stop sequences and \
                 {MAX_SAMPLING_LIST} model hints, not {} and {}",
                options.stop_sequences.len(),
                hints.len()
            ));
        }
        let hint_bytes: usize = hints.iter().map(String::len).sum();
        let messages: Vec<SamplingMessage> = messages
            .into_iter()
            .map(|m| SamplingMessage {
                role: role_from_wit(m.role),
                content: content_from_wit(m.content),
            })
            .collect();
        let size: usize = messages.iter().map(|m| m.content.size()).sum::<usize>()
            + options.system_prompt.as_ref().map_or(0, String::len)
            + options
                .stop_sequences
                .iter()
                .map(String::len)
                .sum::<usize>()
            + hint_bytes;
        if size > self.question_bytes {
            return Err(format!(
                "the sampling request is {size} bytes; at most {} are allowed (max_output_bytes)",
                self.question_bytes
            ));
        }
        let question = Sampling {
            tool: self.tool.clone(),
            call_id: self.call_id.clone(),
            messages,
            options: SamplingOptions {
                system_prompt: options.system_prompt,
                max_tokens: options.max_tokens,
                temperature: options.temperature,
                stop_sequences: options.stop_sequences,
                model_preferences: options.model_preferences.map(|p| ModelPreferences {
                    hints: p.hints,
                    cost_priority: p.cost_priority,
                    speed_priority: p.speed_priority,
                    intelligence_priority: p.intelligence_priority,
                }),
            },
        };
        self.trace.host(format!(
            "asked the client's model ({} messages)",
            question.messages.len()
        ));
        let answer = self.wait(self.asker.sample(&question)).await;
        let answer = answer.inspect_err(|e| self.trace.host(format!("no answer: {e}")))?;
        self.answer_fits(answer.content.size() + answer.model.len())?;
        self.trace
            .host(format!("the model answered ({})", shown(&answer.model)));
        Ok(result_to_wit(answer))
    }

    fn answer_fits(&self, bytes: usize) -> Result<(), String> {
        if bytes > self.answer_bytes {
            return Err(format!(
                "the answer is {bytes} bytes; at most {} are allowed (max_input_bytes)",
                self.answer_bytes
            ));
        }
        Ok(())
    }
}

/// `text` cut for the trace.
fn shown(text: &str) -> String {
    let mut shown = text.to_string();
    super::log::cut(&mut shown, 200);
    shown
}

fn role_from_wit(role: wit::Role) -> Role {
    match role {
        wit::Role::User => Role::User,
        wit::Role::Assistant => Role::Assistant,
    }
}

fn content_from_wit(content: wit::SamplingContent) -> SamplingContent {
    match content {
        wit::SamplingContent::Text(text) => SamplingContent::Text { text },
        wit::SamplingContent::Image(blob) => SamplingContent::Image {
            media_type: blob.media_type,
            data: blob.data,
        },
        wit::SamplingContent::Audio(blob) => SamplingContent::Audio {
            media_type: blob.media_type,
            data: blob.data,
        },
    }
}

fn result_to_wit(result: SamplingResult) -> wit::SamplingResult {
    wit::SamplingResult {
        role: match result.role {
            Role::User => wit::Role::User,
            Role::Assistant => wit::Role::Assistant,
        },
        content: match result.content {
            SamplingContent::Text { text } => wit::SamplingContent::Text(text),
            SamplingContent::Image { media_type, data } => {
                wit::SamplingContent::Image(Blob { media_type, data })
            }
            SamplingContent::Audio { media_type, data } => {
                wit::SamplingContent::Audio(Blob { media_type, data })
            }
        },
        model: result.model,
        stop_reason: result.stop_reason,
    }
}

impl wit::Host for AskCtx {
    async fn elicit(
        &mut self,
        message: String,
        requested_schema: String,
    ) -> Result<wit::ElicitAnswer, String> {
        let allowed = self.allowed(Asked::User)?;
        allowed.elicit(message, requested_schema).await
    }

    async fn sample(
        &mut self,
        messages: Vec<wit::SamplingMessage>,
        options: wit::SamplingOptions,
    ) -> Result<wit::SamplingResult, String> {
        let allowed = self.allowed(Asked::Model)?;
        allowed.sample(messages, options).await
    }
}

/// Link `toolhost:tool/ask` into a linker whose store data holds an
/// [`AskCtx`].
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut AskCtx,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, wasmtime::component::HasSelf<AskCtx>>(linker, get)
}
