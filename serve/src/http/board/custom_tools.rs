//! [`BoardCustomTools`]: a custom tool's call parked until the
//! application posts its result.

use super::*;

/// Custom tools over HTTP: park the call, emit `agent.custom_tool_use`, and
/// wait (bounded) for the client's `user.custom_tool_result`.
pub struct BoardCustomTools {
    /// Where the call parks.
    pub board: Arc<Board>,
    /// Raised when the call parks.
    pub signal: Arc<ParkSignal>,
    /// How long to wait for the result.
    pub timeout: Duration,
}

impl CustomToolRunner for BoardCustomTools {
    fn run<'a>(
        &'a self,
        session: &'a Session,
        request: &'a CustomToolUse,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>> {
        Box::pin(async move {
            let Some(parked) = self.board.park(
                &request.call_id,
                &request.tool_name,
                &request.session_id,
                Status::AwaitingCustomToolResult,
            ) else {
                return Err(CallError::Overloaded(
                    toolhost::Overloaded::TooManyWaiting {
                        max: self.board.max_waiting,
                    },
                ));
            };
            let (tx, rx) = oneshot::channel();
            *parked.answer.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
            self.board.share(&request.call_id, &parked).await;
            // Awaited: the client learns of the call only from this event.
            let told = session
                .events()
                .append(
                    EventKind::CustomToolUse,
                    EventData::Json(json!({
                        "customToolUseId": request.call_id,
                        "callId": request.call_id,
                        "name": request.tool_name,
                        "input": request.input,
                        "sessionId": request.session_id,
                    })),
                )
                .await;
            if let Err(e) = told {
                parked
                    .answer
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                self.board.set_status(&parked, Status::Running, None);
                return Err(CallError::StateUnavailable {
                    tool: request.tool_name.clone(),
                    reason: format!("its `agent.custom_tool_use` event was not recorded: {e}"),
                });
            }
            self.signal.raise(Status::AwaitingCustomToolResult);
            let output = match tokio::time::timeout(self.timeout, rx).await {
                Ok(Ok(output)) => output,
                Ok(Err(_)) | Err(_) => {
                    parked
                        .answer
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take();
                    ToolOutput::text(
                        format!(
                            "custom tool `{}` got no result: the client did not post a \
                             user.custom_tool_result within {} s",
                            request.tool_name,
                            self.timeout.as_secs()
                        ),
                        true,
                    )
                }
            };
            self.board.set_status(&parked, Status::Running, None);
            Ok(output)
        })
    }
}
