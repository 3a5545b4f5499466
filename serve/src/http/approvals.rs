//! `POST /<slug>/v1/approvals/<callId>` and `GET /<slug>/v1/calls/<callId>`.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::App;
use super::board::{AnswerError, Status};
use super::error::{ApiError, JsonBody, PathParams, Query};
use super::tools::outcome_response;
use toolhost::call::ApprovalDecision;

/// The longest a poll may wait.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// The body of an approval.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DecisionBody {
    /// `approve` or `deny`.
    decision: String,
    /// Who decides: reaches the tool as `approved-by`, names the denier.
    auth: Value,
    /// Why (for a denial).
    reason: Option<String>,
}

pub(super) async fn decide(
    State(app): State<Arc<App>>,
    PathParams((slug, call_id)): PathParams<(String, String)>,
    JsonBody(body): JsonBody<DecisionBody>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let invalid = |m: &str| ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", m);
    if !body.auth.is_object() {
        return Err(invalid("`auth` must be the approver's auth, a JSON object"));
    }
    let decision = match body.decision.as_str() {
        "approve" => ApprovalDecision::Approved { by: body.auth },
        "deny" => ApprovalDecision::Denied {
            by: body.auth,
            reason: body.reason,
        },
        _ => return Err(invalid("`decision` must be \"approve\" or \"deny\"")),
    };
    app.board.decide(&call_id, decision).map_err(|e| match e {
        AnswerError::NotFound(_) => {
            ApiError::new(StatusCode::NOT_FOUND, "call_not_found", e.to_string())
        }
        AnswerError::NotWaiting { .. } => {
            ApiError::new(StatusCode::CONFLICT, "call_not_waiting", e.to_string())
        }
    })?;
    Ok(Json(json!({ "ok": true, "callId": call_id })))
}

/// How long `?wait=` asks to wait: clamped to [`MAX_WAIT`] before it is
/// converted, so no number (huge, negative, NaN) can panic.
fn poll_wait(seconds: Option<f64>) -> Duration {
    seconds
        .filter(|w| w.is_finite() && *w > 0.0)
        .map_or(Duration::ZERO, |w| {
            Duration::from_secs_f64(w.min(MAX_WAIT.as_secs_f64()))
        })
}

/// `?wait=<seconds>`: long-poll up to that long (at most 60) for the result.
#[derive(Deserialize)]
pub(super) struct PollQuery {
    wait: Option<f64>,
}

pub(super) async fn poll(
    State(app): State<Arc<App>>,
    PathParams((slug, call_id)): PathParams<(String, String)>,
    Query(query): Query<PollQuery>,
) -> Result<Response, ApiError> {
    app.check_slug(&slug)?;
    let wait = poll_wait(query.wait);
    let view = app.board.view(&call_id, wait).await.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "call_not_found",
            format!(
                "no waiting call `{call_id}` is known (calls that answered at once are not kept, \
                 and finished ones expire with the session retention)"
            ),
        )
    })?;
    match (view.status, view.outcome) {
        (Status::Done, Some(outcome)) => outcome_response(outcome),
        (status, _) => Ok((
            StatusCode::ACCEPTED,
            Json(json!({
                "ok": true,
                "callId": call_id,
                "toolName": view.tool_name,
                "sessionId": view.session_id,
                "status": status,
            })),
        )
            .into_response()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_wait_is_clamped_never_a_panic() {
        assert_eq!(poll_wait(Some(1e300)), MAX_WAIT);
        assert_eq!(poll_wait(Some(f64::MAX)), MAX_WAIT);
        assert_eq!(poll_wait(Some(-5.0)), Duration::ZERO);
        assert_eq!(poll_wait(Some(f64::NAN)), Duration::ZERO);
        assert_eq!(poll_wait(Some(f64::INFINITY)), Duration::ZERO);
        assert_eq!(poll_wait(None), Duration::ZERO);
        assert_eq!(poll_wait(Some(1.5)), Duration::from_millis(1500));
    }
}
