//! Test guest: asks what its input says through `ask-all` (keys, kinds and
//! sizes of the test's choosing, `times` over) and says what came back, or
//! the host's refusal, as text.

use toolhost_sdk::ask::{self, Question, Reply, Request};
use toolhost_sdk::prelude::*;

/// What to ask.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The questions, asked together.
    questions: Vec<Asked>,
    /// How many times to ask them (1 unless set).
    times: Option<u32>,
}

/// One question.
#[derive(Deserialize, JsonSchema)]
struct Asked {
    /// Its key.
    key: String,
    /// `user`, `model` or `roots`.
    kind: String,
    /// The message for the user or the model (a default when empty).
    #[serde(default)]
    message: String,
}

struct AskAll;

impl Tool for AskAll {
    type Input = Input;
    const DESCRIPTION: &'static str = "Asks several questions at once and says what came back.";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let questions: Vec<(&str, Question)> = input
            .questions
            .iter()
            .map(|asked| {
                let message = match asked.message.is_empty() {
                    true => "Your name?".to_string(),
                    false => asked.message.clone(),
                };
                let question = match asked.kind.as_str() {
                    "user" => Question::User {
                        message,
                        schema: json!({
                            "type": "object",
                            "properties": { "name": { "type": "string" } },
                            "required": ["name"],
                        }),
                    },
                    "model" => Question::Model(Request::text(message, 50)),
                    _ => Question::Roots,
                };
                (asked.key.as_str(), question)
            })
            .collect();
        let mut said = Vec::new();
        for _ in 0..input.times.unwrap_or(1) {
            let replies = match ask::ask_all(&questions) {
                Ok(replies) => replies,
                Err(refused) => return Ok(format!("refused: {refused}").into()),
            };
            for reply in replies {
                said.push(match reply {
                    Reply::User(ask::Answer::Accept(content)) => {
                        format!("user: {}", Value::Object(content))
                    }
                    Reply::User(other) => format!("user: {other:?}"),
                    Reply::Model(sample) => format!("model: {}", sample.text().unwrap_or("")),
                    Reply::Roots(roots) => format!(
                        "roots: {}",
                        roots
                            .iter()
                            .map(|r| r.uri.as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                });
            }
        }
        Ok(said.join("\n").into())
    }
}

export_tool!(AskAll);
