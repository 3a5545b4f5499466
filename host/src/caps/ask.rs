//! `toolhost:tool/ask`: a running call asks the person using the client
//! (`elicit`), the client's model (`sample`), or several questions at once,
//! the client's roots among them (`ask-all`).
//!
//! Granted per tool (`ask = ["user", "model", "roots"]`); the check is here, and a
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
    self, Answer, AskError, Asker, ElicitAnswer, Elicitation, KeyedQuestion, MAX_SAMPLING_MESSAGES,
    ModelPreferences, Question, Root, RootsRequest, Sampling, SamplingContent, SamplingMessage,
    SamplingOptions, SamplingResult,
};
use crate::bindings::toolhost::tool::ask as wit;
use crate::bindings::types::Blob;
use crate::deadline::Deadline;
use crate::prompts::Role;

/// The most questions one call may ask.
pub const MAX_QUESTIONS_PER_CALL: u32 = 16;
/// The most stop sequences, and model hints, a sampling request may hold.
pub const MAX_SAMPLING_LIST: usize = 16;
/// The most questions one `ask-all` may hold.
pub const MAX_QUESTIONS_AT_ONCE: usize = 8;
/// The most roots a client's answer may name.
pub const MAX_ROOTS: usize = 256;

/// Whom a tool may ask during a call (`ask`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Asked {
    /// The person using the client (MCP elicitation).
    User,
    /// The client's model (MCP sampling).
    Model,
    /// The client's roots (MCP `roots/list`).
    Roots,
}

impl std::fmt::Display for Asked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::User => "user",
            Self::Model => "model",
            Self::Roots => "roots",
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

    /// The call's asking, when it may ask each of `whom` (one question
    /// each), counted against the questions a call may ask.
    fn allowed(&self, whom: &[Asked]) -> Result<&Asking, String> {
        let asking = self
            .allowed
            .as_deref()
            .map_err(|during| format!("no question can be asked during {during}"))?;
        let allowed = &asking.allowed;
        if let Some(whom) = whom.iter().find(|whom| !allowed.grant.contains(whom)) {
            let tool = &allowed.tool;
            return Err(format!(
                "tool `{tool}` may not ask the {}: the operator grants it with \
                 `ask = [\"{whom}\"]` in [tools.{tool}] of toolhost.toml",
                match whom {
                    Asked::User => "user",
                    Asked::Model => "client's model",
                    Asked::Roots => "client for its roots",
                },
            ));
        }
        let more = whom.len() as u32;
        let asked = asking
            .asked
            .fetch_add(more, std::sync::atomic::Ordering::Relaxed);
        if asked + more > MAX_QUESTIONS_PER_CALL {
            return Err(format!(
                "this call asked {} questions already; {more} more would pass \
                 {MAX_QUESTIONS_PER_CALL}, the most a call may",
                asked.min(MAX_QUESTIONS_PER_CALL)
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
        let (question, form) = self.form_question(message, form)?;
        self.trace
            .host(format!("asked the user: {}", shown(&question.message)));
        let answer = self.wait(self.asker.elicit(&question)).await;
        let answer = answer.inspect_err(|e| self.trace.host(format!("no answer: {e}")))?;
        let (answer, bytes) = self.form_answer(&form, answer)?;
        self.answer_fits(bytes)?;
        Ok(answer)
    }

    /// A question for the user, checked, and the check of its answer.
    fn form_question(
        &self,
        message: String,
        form: String,
    ) -> Result<(Elicitation, jsonschema::Validator), String> {
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
        Ok((question, validator))
    }

    /// The user's answer checked against `form`, and its size in bytes.
    fn form_answer(
        &self,
        form: &jsonschema::Validator,
        answer: ElicitAnswer,
    ) -> Result<(wit::ElicitAnswer, usize), String> {
        Ok(match answer {
            ElicitAnswer::Accept(content) => {
                let content = Value::Object(content);
                if let Some(error) = form.iter_errors(&content).next() {
                    self.trace.host("the answer did not fit the form");
                    return Err(format!(
                        "the answer does not fit the form at {:?}: {error}",
                        error.instance_path().to_string()
                    ));
                }
                let text = content.to_string();
                self.trace.host("the user answered");
                let bytes = text.len();
                (wit::ElicitAnswer::Accept(text), bytes)
            }
            ElicitAnswer::Decline => {
                self.trace.host("the user declined");
                (wit::ElicitAnswer::Decline, 0)
            }
            ElicitAnswer::Cancel => {
                self.trace.host("the user cancelled");
                (wit::ElicitAnswer::Cancel, 0)
            }
        })
    }

    async fn sample(
        &self,
        messages: Vec<wit::SamplingMessage>,
        options: wit::SamplingOptions,
    ) -> Result<wit::SamplingResult, String> {
        let (question, _) = self.sampling_question(messages, options)?;
        self.trace.host(format!(
            "asked the client's model ({} messages)",
            question.messages.len()
        ));
        let answer = self.wait(self.asker.sample(&question)).await;
        let answer = answer.inspect_err(|e| self.trace.host(format!("no answer: {e}")))?;
        let (answer, bytes) = self.sampling_answer(answer);
        self.answer_fits(bytes)?;
        Ok(answer)
    }

    /// A question for the client's model, checked, and its size in bytes.
    fn sampling_question(
        &self,
        messages: Vec<wit::SamplingMessage>,
        options: wit::SamplingOptions,
    ) -> Result<(Sampling, usize), String> {
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
        Ok((question, size))
    }

    /// The model's answer for the tool, and its size in bytes.
    fn sampling_answer(&self, answer: SamplingResult) -> (wit::SamplingResult, usize) {
        self.trace
            .host(format!("the model answered ({})", shown(&answer.model)));
        let bytes = answer.content.size() + answer.model.len();
        (result_to_wit(answer), bytes)
    }

    /// The client's roots for the tool, checked, and their size in bytes.
    fn roots_answer(&self, roots: Vec<Root>) -> Result<(Vec<wit::Root>, usize), String> {
        if roots.len() > MAX_ROOTS {
            return Err(format!(
                "the client named {} roots; at most {MAX_ROOTS} are taken",
                roots.len()
            ));
        }
        let mut bytes = 0;
        for (at, root) in roots.iter().enumerate() {
            if !root.uri.starts_with("file://") {
                return Err(format!(
                    "root {at} is {:?}: a root is a file:// URI",
                    shown(&root.uri)
                ));
            }
            for (what, text) in [("URI", Some(&root.uri)), ("name", root.name.as_ref())] {
                if let Some(problem) = text.and_then(|t| crate::tool::text_problem(t)) {
                    return Err(format!("root {at}'s {what} {problem}"));
                }
            }
            bytes += root.uri.len() + root.name.as_ref().map_or(0, String::len);
        }
        self.trace
            .host(format!("the client named {} roots", roots.len()));
        let roots = roots
            .into_iter()
            .map(|Root { uri, name }| wit::Root { uri, name })
            .collect();
        Ok((roots, bytes))
    }

    async fn ask_all(
        &self,
        questions: Vec<wit::KeyedQuestion>,
    ) -> Result<Vec<wit::Answer>, String> {
        let mut asked = Vec::with_capacity(questions.len());
        let mut checks = Vec::with_capacity(questions.len());
        let mut question_bytes = 0;
        for wit::KeyedQuestion { key, question } in questions {
            let named = |e: String| format!("question `{key}`: {e}");
            let (question, check) = match question {
                wit::Question::User(form) => {
                    question_bytes += form.message.len() + form.requested_schema.len();
                    let (question, form) = self
                        .form_question(form.message, form.requested_schema)
                        .map_err(named)?;
                    (Question::Elicitation(question), Some(form))
                }
                wit::Question::Model(sampling) => {
                    let (question, bytes) = self
                        .sampling_question(sampling.messages, sampling.options)
                        .map_err(named)?;
                    question_bytes += bytes;
                    (Question::Sampling(question), None)
                }
                wit::Question::Roots => {
                    let question = RootsRequest {
                        tool: self.tool.clone(),
                        call_id: self.call_id.clone(),
                    };
                    (Question::Roots(question), None)
                }
            };
            asked.push(KeyedQuestion { key, question });
            checks.push(check);
        }
        if question_bytes > self.question_bytes {
            return Err(format!(
                "the questions are {question_bytes} bytes together; at most {} are allowed \
                 (max_output_bytes)",
                self.question_bytes
            ));
        }
        let keys: Vec<&str> = asked.iter().map(|q| q.key.as_str()).collect();
        self.trace
            .host(format!("asked at once: {}", shown(&keys.join(", "))));
        let answers = self.wait(self.asker.ask_all(&asked)).await;
        let answers = answers.inspect_err(|e| self.trace.host(format!("no answer: {e}")))?;
        if answers.len() != asked.len() {
            return Err(format!(
                "the surface gave {} answers to {} questions",
                answers.len(),
                asked.len()
            ));
        }
        let mut answer_bytes = 0;
        let mut given = Vec::with_capacity(answers.len());
        for ((asked, form), answer) in asked.iter().zip(&checks).zip(answers) {
            let named = |e: String| format!("question `{}`: {e}", asked.key);
            let (answer, bytes) = match (&asked.question, form, answer) {
                (Question::Elicitation(_), Some(form), Answer::Elicitation(answer)) => {
                    let (answer, bytes) = self.form_answer(form, answer).map_err(named)?;
                    (wit::Answer::User(answer), bytes)
                }
                (Question::Sampling(_), _, Answer::Sampling(answer)) => {
                    let (answer, bytes) = self.sampling_answer(answer);
                    (wit::Answer::Model(answer), bytes)
                }
                (Question::Roots(_), _, Answer::Roots(roots)) => {
                    let (roots, bytes) = self.roots_answer(roots).map_err(named)?;
                    (wit::Answer::Roots(roots), bytes)
                }
                _ => return Err(named("the answer is not of the kind asked".into())),
            };
            answer_bytes += bytes;
            given.push(answer);
        }
        self.answer_fits(answer_bytes)?;
        Ok(given)
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
        let allowed = self.allowed(&[Asked::User])?;
        allowed.elicit(message, requested_schema).await
    }

    async fn sample(
        &mut self,
        messages: Vec<wit::SamplingMessage>,
        options: wit::SamplingOptions,
    ) -> Result<wit::SamplingResult, String> {
        let allowed = self.allowed(&[Asked::Model])?;
        allowed.sample(messages, options).await
    }

    async fn ask_all(
        &mut self,
        questions: Vec<wit::KeyedQuestion>,
    ) -> Result<Vec<wit::Answer>, String> {
        if questions.is_empty() || questions.len() > MAX_QUESTIONS_AT_ONCE {
            return Err(format!(
                "ask-all takes 1 to {MAX_QUESTIONS_AT_ONCE} questions, not {}",
                questions.len()
            ));
        }
        let mut keys = BTreeSet::new();
        for asked in &questions {
            ask::check_key(&asked.key)?;
            if !keys.insert(asked.key.as_str()) {
                return Err(format!("the key `{}` names two questions", asked.key));
            }
        }
        let whom: Vec<Asked> = questions
            .iter()
            .map(|asked| match asked.question {
                wit::Question::User(_) => Asked::User,
                wit::Question::Model(_) => Asked::Model,
                wit::Question::Roots => Asked::Roots,
            })
            .collect();
        let allowed = self.allowed(&whom)?;
        allowed.ask_all(questions).await
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
