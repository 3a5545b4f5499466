//! [`BoardAsker`]: a tool's question to the user or the model, parked
//! until the application posts the answer.

use super::*;

/// The answer to a question a call asked.
#[derive(Debug)]
pub enum Answered {
    /// The user's, to an elicitation.
    Elicitation(ElicitAnswer),
    /// The model's, to a sampling request.
    Sampling(SamplingResult),
}

/// Questions over HTTP: park the call, emit `agent.elicitation` or
/// `agent.sampling` in its session, and wait for the client's
/// `user.elicitation_result` or `user.sampling_result` (the host bounds
/// the wait with `ask_timeout_ms`).
pub struct BoardAsker {
    /// Where the call parks.
    pub board: Arc<Board>,
    /// Raised when the call parks.
    pub signal: Arc<ParkSignal>,
    /// The call's session, where the question is emitted.
    pub session: Arc<Session>,
}

/// Puts a parked call back to running when its question ends, answered or
/// not (the host drops the wait at `ask_timeout_ms`).
struct Asking<'a> {
    board: &'a Board,
    parked: Arc<Parked>,
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        self.parked
            .asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        self.board.set_status(&self.parked, Status::Running, None);
    }
}

impl BoardAsker {
    /// Park `call_id` as `status`, emit `kind` with `data`, and wait for
    /// the answer.
    async fn ask(
        &self,
        call_id: &str,
        tool: &str,
        status: Status,
        kind: EventKind,
        data: serde_json::Value,
    ) -> Result<Answered, AskError> {
        let Some(parked) = self.board.park(call_id, tool, self.session.id(), status) else {
            return Err(AskError::Unavailable(
                toolhost::Overloaded::TooManyWaiting {
                    max: self.board.max_waiting,
                }
                .to_string(),
            ));
        };
        let (tx, rx) = oneshot::channel();
        *parked.asked.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
        self.board.share(call_id, &parked).await;
        let _asking = Asking {
            board: &self.board,
            parked,
        };
        // Awaited: the client learns of the question only from this event.
        self.session
            .events()
            .append(kind, EventData::Json(data))
            .await
            .map_err(|e| {
                AskError::Unavailable(format!("the question's event was not recorded: {e}"))
            })?;
        self.signal.raise(status);
        rx.await
            .map_err(|_| AskError::Failed("the question was dropped unanswered".into()))
    }
}

impl Asker for BoardAsker {
    fn elicit<'a>(
        &'a self,
        question: &'a Elicitation,
    ) -> BoxFuture<'a, Result<ElicitAnswer, AskError>> {
        Box::pin(async move {
            let data = json!({
                "callId": question.call_id,
                "toolName": question.tool,
                "message": question.message,
                "requestedSchema": question.requested_schema,
                "sessionId": self.session.id(),
            });
            let status = Status::AwaitingElicitationResult;
            match self
                .ask(
                    &question.call_id,
                    &question.tool,
                    status,
                    EventKind::Elicitation,
                    data,
                )
                .await?
            {
                Answered::Elicitation(answer) => Ok(answer),
                Answered::Sampling(_) => Err(AskError::Failed(
                    "a sampling result answered an elicitation".into(),
                )),
            }
        })
    }

    fn sample<'a>(
        &'a self,
        question: &'a Sampling,
    ) -> BoxFuture<'a, Result<SamplingResult, AskError>> {
        Box::pin(async move {
            let data = json!({
                "callId": question.call_id,
                "toolName": question.tool,
                "messages": question.messages,
                "options": question.options,
                "sessionId": self.session.id(),
            });
            let status = Status::AwaitingSamplingResult;
            match self
                .ask(
                    &question.call_id,
                    &question.tool,
                    status,
                    EventKind::Sampling,
                    data,
                )
                .await?
            {
                Answered::Sampling(answer) => Ok(answer),
                Answered::Elicitation(_) => Err(AskError::Failed(
                    "an elicitation result answered a sampling request".into(),
                )),
            }
        })
    }
}
