//! `POST /<slug>/v1/approvals/<callId>` and `GET /<slug>/v1/calls/<callId>`.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::App;
use super::board::{AnswerError, Status};
use super::error::{ApiError, JsonBody, PathParams, Query};
use super::fleet_calls::{FleetCalls, ForwardError, Forwarded};
use super::tools::outcome_response;
use toolhost::call::ApprovalDecision;

/// The longest a poll may wait.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// How often a poll of a call parked on another server reads it again.
const FLEET_POLL: Duration = Duration::from_millis(100);

/// The body of an approval.
#[derive(Deserialize, Serialize)]
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
    let raw = serde_json::to_value(&body).map_err(|e| ApiError::internal(e.to_string()))?;
    let decision = decision_of(body)?;
    match app.board.decide(&call_id, decision) {
        Err(AnswerError::NotFound(_)) if app.board.fleet().is_some() => {
            let fleet = app
                .board
                .fleet()
                .ok_or_else(|| ApiError::internal("no fleet"))?;
            let forwarded = Forwarded::Approval { body: raw };
            fleet
                .forward(
                    &call_id,
                    Status::AwaitingApproval.name(),
                    None,
                    &forwarded,
                    "an approval",
                )
                .await?;
        }
        delivered => delivered?,
    }
    Ok(Json(json!({ "ok": true, "callId": call_id })))
}

/// The decision an approval's body gives.
pub(super) fn decision_of(body: DecisionBody) -> Result<ApprovalDecision, ApiError> {
    let invalid = |m: &str| ApiError::new(StatusCode::BAD_REQUEST, "invalid_request", m);
    if !body.auth.is_object() {
        return Err(invalid("`auth` must be the approver's auth, a JSON object"));
    }
    match body.decision.as_str() {
        "approve" => Ok(ApprovalDecision::Approved { by: body.auth }),
        "deny" => Ok(ApprovalDecision::Denied {
            by: body.auth,
            reason: body.reason,
        }),
        _ => Err(invalid("`decision` must be \"approve\" or \"deny\"")),
    }
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
    let not_found = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "call_not_found",
            format!(
                "no waiting call `{call_id}` is known (calls that answered at once are not kept, \
                 and finished ones expire with the session retention)"
            ),
        )
    };
    let Some(view) = app.board.view(&call_id, wait).await else {
        return match app.board.fleet() {
            Some(fleet) => poll_fleet(fleet, &call_id, wait)
                .await?
                .ok_or_else(not_found),
            None => Err(not_found()),
        };
    };
    match (view.status, view.outcome) {
        (Status::Done, Some(outcome)) => outcome_response(outcome),
        (status, _) => Ok(waiting(
            &call_id,
            &view.tool_name,
            &view.session_id,
            &json!(status),
        )),
    }
}

/// `202` for a call that has not finished.
fn waiting(call_id: &str, tool: &str, session: &str, status: &Value) -> Response {
    (
        StatusCode::ACCEPTED,
        Json(json!({
            "ok": true,
            "callId": call_id,
            "toolName": tool,
            "sessionId": session,
            "status": status,
        })),
    )
        .into_response()
}

/// A call parked on another server of the fleet, waiting up to `wait` for
/// it to finish; `None` if no server parked it.
async fn poll_fleet(
    fleet: &Arc<FleetCalls>,
    call_id: &str,
    wait: Duration,
) -> Result<Option<Response>, ApiError> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let Some(call) = fleet
            .view(call_id)
            .await
            .map_err(|e| ApiError::from(ForwardError::Unavailable(e)))?
        else {
            return Ok(None);
        };
        if let Some((status, body)) = call.outcome {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            return Ok(Some((status, Json(body)).into_response()));
        }
        if !call.owner_alive {
            return Err(ForwardError::OwnerGone(call_id.to_string()).into());
        }
        if tokio::time::Instant::now() >= deadline {
            let status = Value::String(call.status);
            return Ok(Some(waiting(
                call_id,
                &call.tool_name,
                &call.session_id,
                &status,
            )));
        }
        tokio::time::sleep_until(deadline.min(tokio::time::Instant::now() + FLEET_POLL)).await;
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
