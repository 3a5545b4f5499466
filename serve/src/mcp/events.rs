//! What a call running for an MCP request tells whoever waits on it: its
//! request, the request's input-required rounds ([`super::rounds`]) or its
//! task ([`super::tasks`]): a round of questions it waits on, a capability
//! its client lacks, or how it finished.

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks sampling and roots deprecated (SEP-2577): 2026-07-28 deprecates \
              them and still defines them"
)]

use std::collections::BTreeMap;

use rmcp::model::{
    CallToolResponse, ClientCapabilities, CreateMessageResult, ElicitResult, ErrorData,
    GetPromptResponse, InputRequest, InputResponses, ListRootsResult,
};
use serde_json::Value;
use tokio::sync::oneshot;

/// What a running call tells the request waiting on it.
pub enum Event {
    /// It asked the client something and waits for the answers.
    Asked(Round),
    /// It needs a capability the client did not declare.
    Missing(ClientCapabilities),
    /// It finished: the request's answer.
    Finished(Result<Reply, ErrorData>),
}

/// What a call or a prompt finished with: the answer to the request.
pub enum Reply {
    /// A tool call's, and the trap or limit that ended it before the tool
    /// answered, if one did (a task that ends so is `failed`).
    Call {
        /// The answer.
        response: CallToolResponse,
        /// What ended the call, when the tool did not.
        failure: Option<String>,
    },
    /// A prompt's.
    Prompt(GetPromptResponse),
}

/// The questions a call waits on, asked together: answered once every one
/// is (a retry may answer some; the rest are asked again).
pub struct Round {
    /// Whether the tool named the questions (`ask-all`): the input a call
    /// gathers before it may become a task.
    pub(super) named: bool,
    /// Each question by its key in `inputRequests`.
    pub(super) questions: BTreeMap<String, InputRequest>,
    /// The answers given so far, by key.
    pub(super) answered: BTreeMap<String, Value>,
    pub(super) answer: oneshot::Sender<BTreeMap<String, Value>>,
}

impl Round {
    /// Take the answers in `responses` to questions still open (keys not
    /// asked, and answers of the wrong shape, are left out); whether every
    /// question is answered now.
    pub fn take(&mut self, mut responses: InputResponses) -> bool {
        for (key, request) in &self.questions {
            if let Some(answer) = responses.remove(key).filter(|a| fits(request, a)) {
                self.answered.insert(key.clone(), answer);
            }
        }
        self.answered.len() == self.questions.len()
    }

    /// Hand the answers to the call waiting on them.
    pub fn finish(self) {
        let _ = self.answer.send(self.answered);
    }

    /// Whether the tool named its questions.
    pub fn named(&self) -> bool {
        self.named
    }

    /// The questions not answered yet.
    pub fn open(&self) -> BTreeMap<String, InputRequest> {
        self.questions
            .iter()
            .filter(|(key, _)| !self.answered.contains_key(*key))
            .map(|(key, request)| (key.clone(), request.clone()))
            .collect()
    }
}

/// Whether `answer` has the shape of an answer to `request`: an
/// elicitation's, a sample's, or a roots list.
pub(super) fn fits(request: &InputRequest, answer: &Value) -> bool {
    fn is<T: serde::de::DeserializeOwned>(answer: &Value) -> bool {
        T::deserialize(answer).is_ok()
    }
    match request {
        InputRequest::Elicitation(_) => is::<ElicitResult>(answer),
        InputRequest::CreateMessage(_) => is::<CreateMessageResult>(answer),
        InputRequest::ListRoots(_) => is::<ListRootsResult>(answer),
        // A kind of request this server never makes.
        _ => false,
    }
}
