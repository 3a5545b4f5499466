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
use toolhost::session::{VOUCHED_BY, VOUCHED_PRINCIPALS};

/// The longest a poll may wait.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// How often a poll of a call parked on another server reads it again.
const FLEET_POLL: Duration = Duration::from_millis(100);

/// The body of an approval.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct DecisionBody {
    /// `approve` or `deny`.
    decision: String,
    /// Who decides, as the client's application vouches: reaches the tool
    /// as `approved-by`, names the denier. Without it, the approver is
    /// who the server itself can vouch for ([`vouched_approver`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    auth: Option<Value>,
    /// A name the person deciding typed (the console asks for one): kept
    /// beside the approver as `claimedName`, never taken for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    claimed_name: Option<String>,
    /// Why (for a denial).
    reason: Option<String>,
}

/// The longest `claimedName` and `reason` kept.
const MAX_NOTE_CHARS: usize = 1000;

/// The approver the server can vouch for when a decision names none: the
/// holder of its token, or whoever reached its loopback address.
fn vouched_approver(app: &App) -> &'static str {
    let [token, loopback] = VOUCHED_PRINCIPALS;
    if app.options.token.is_some() {
        token
    } else {
        loopback
    }
}

/// `GET /<slug>/v1/approvals`: the approvals this server asked for, or
/// its fleet's.
pub(super) async fn list(
    State(app): State<Arc<App>>,
    PathParams(slug): PathParams<String>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    match app.board.fleet() {
        Some(fleet) => fleet.approvals().list().await.map(Json).map_err(|reason| {
            ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "state_unavailable", reason)
        }),
        None => Ok(Json(app.board.approvals().to_json())),
    }
}

pub(super) async fn decide(
    State(app): State<Arc<App>>,
    PathParams((slug, call_id)): PathParams<(String, String)>,
    JsonBody(mut body): JsonBody<DecisionBody>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    // A client names identity only, never one the server vouches for.
    body.auth = body
        .auth
        .as_ref()
        .map(super::caller::principal)
        .transpose()?;
    // Vouched for here, where the request was authenticated (a decision
    // forwarded to the call's server carries it).
    body.auth.get_or_insert_with(
        || json!({ "principal": vouched_approver(&app), VOUCHED_BY: "toolhost" }),
    );
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
    let Some(mut by @ Value::Object(_)) = body.auth else {
        return Err(invalid("`auth` must be the approver's auth, a JSON object"));
    };
    if let Some(name) = body.claimed_name {
        if name.chars().count() > MAX_NOTE_CHARS {
            return Err(invalid("`claimedName` is longer than 1000 characters"));
        }
        by["claimedName"] = json!(name);
    }
    if body
        .reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > MAX_NOTE_CHARS)
    {
        return Err(invalid("`reason` is longer than 1000 characters"));
    }
    match body.decision.as_str() {
        "approve" => Ok(ApprovalDecision::Approved { by }),
        "deny" => Ok(ApprovalDecision::Denied {
            by,
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

/// `?wait=<seconds>`: long-poll up to that long (at most 60) for the result;
/// `?trace=true`: with its trace.
#[derive(Deserialize)]
pub(super) struct PollQuery {
    wait: Option<f64>,
    #[serde(default)]
    trace: bool,
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
        (Status::Done, Some(outcome)) => outcome_response(outcome, query.trace),
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
