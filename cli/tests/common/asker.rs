//! An [`Asker`] that answers a call's questions as a test scripts it.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

use toolhost::ask::{
    AskError, Asker, ElicitAnswer, Elicitation, Sampling, SamplingContent, SamplingResult,
};
use toolhost::prompts::Role;

/// Answers after `delay` (or once `release` is notified, when given):
/// `answer` for a form, an echo of the last message for the model.
/// `asked` is notified as each question arrives.
pub struct Scripted {
    pub delay: Duration,
    pub release: Option<Arc<Notify>>,
    pub answer: ElicitAnswer,
    pub asked: Notify,
}

impl Scripted {
    pub fn after(delay: Duration, answer: ElicitAnswer) -> Arc<Self> {
        Arc::new(Self {
            delay,
            release: None,
            answer,
            asked: Notify::new(),
        })
    }

    async fn wait(&self) {
        self.asked.notify_one();
        match &self.release {
            Some(release) => release.notified().await,
            None => tokio::time::sleep(self.delay).await,
        }
    }
}

impl Asker for Scripted {
    fn elicit<'a>(&'a self, _: &'a Elicitation) -> BoxFuture<'a, Result<ElicitAnswer, AskError>> {
        Box::pin(async move {
            self.wait().await;
            Ok(self.answer.clone())
        })
    }

    fn sample<'a>(&'a self, q: &'a Sampling) -> BoxFuture<'a, Result<SamplingResult, AskError>> {
        Box::pin(async move {
            self.wait().await;
            let said = match &q.messages[0].content {
                SamplingContent::Text { text } => text.clone(),
                other => format!("{other:?}"),
            };
            Ok(SamplingResult {
                role: Role::Assistant,
                content: SamplingContent::Text {
                    text: format!("you said: {said}"),
                },
                model: "scripted".into(),
                stop_reason: Some("endTurn".into()),
            })
        })
    }
}

/// The user's answer: the form filled in with `pairs`.
pub fn accept(pairs: &[(&str, &str)]) -> ElicitAnswer {
    let content: Map<String, Value> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    ElicitAnswer::Accept(content)
}
