//! [`BoardApprover`]: an `always_ask` call parked until someone approves
//! or denies it over the API.

use super::*;

/// Approvals over HTTP: park the call, say it waits (the pipeline records
/// `approval.requested`), and wait (bounded) for `POST …/approvals/<callId>`.
pub struct BoardApprover {
    /// Where the call parks.
    pub board: Arc<Board>,
    /// Raised when the call parks.
    pub signal: Arc<ParkSignal>,
    /// How long to wait before the approval expires.
    pub timeout: Duration,
    /// Who the call is made for (its session owner's auth), as listed.
    pub requested_by: Option<Value>,
}

impl Approver for BoardApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            let Some(parked) = self.board.park(
                &request.call_id,
                &request.tool_name,
                &request.session_id,
                Status::AwaitingApproval,
            ) else {
                return ApprovalDecision::Unavailable {
                    how: toolhost::Overloaded::TooManyWaiting {
                        max: self.board.max_waiting,
                    }
                    .to_string(),
                };
            };
            let (tx, rx) = oneshot::channel();
            *parked
                .approval
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(tx);
            self.board.share(&request.call_id, &parked).await;
            let expires_at = chrono::Utc::now()
                + chrono::Duration::from_std(self.timeout).unwrap_or(chrono::Duration::MAX);
            let asked = self.board.approvals.requested(
                request,
                self.requested_by.clone(),
                Some(expires_at),
            );
            self.board
                .share_approval(&request.call_id, Some(expires_at))
                .await;
            request.waiting(Some(expires_at));
            self.signal.raise(Status::AwaitingApproval);
            let decision = match tokio::time::timeout(self.timeout, rx).await {
                Ok(Ok(decision)) => decision,
                Ok(Err(_)) | Err(_) => {
                    parked
                        .approval
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .take();
                    ApprovalDecision::Expired {
                        waited: self.timeout,
                    }
                }
            };
            asked.decided(&decision);
            self.board.share_approval(&request.call_id, None).await;
            self.board.set_status(&parked, Status::Running, None);
            decision
        })
    }
}
