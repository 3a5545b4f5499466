//! A session's reminders over HTTP — listed, and cancelled — and the calls
//! they fire, which park on the board like any call in a session (an
//! `always_ask` tool waits for `POST …/approvals/<callId>`).

use std::sync::{Arc, Weak};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};
use toolhost::call::{CallOptions, ReminderCalls};
use toolhost::session::Session;
use toolhost::session::reminders::ReminderError;

use super::App;
use super::board::{Outcome, ParkSignal};
use super::caller::Caller;
use super::error::{ApiError, PathParams};
use super::sessions::find;
use super::tools::parked_options;

/// `GET /<slug>/v1/sessions/<id>/reminders`: `{"reminders": [...]}`, the
/// pending ones, soonest first.
pub(super) async fn list(
    State(app): State<Arc<App>>,
    PathParams((slug, id)): PathParams<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    let pending = app
        .sessions
        .pending_reminders(session.id())
        .await
        .map_err(unavailable)?;
    let listed: Vec<Value> = pending.iter().map(|r| r.to_json()).collect();
    Ok(Json(json!({ "reminders": listed })))
}

/// The store of reminders failed (a disk, or Redis).
fn unavailable(error: ReminderError) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "reminder_unavailable",
        error.to_string(),
    )
}

/// `DELETE /<slug>/v1/sessions/<id>/reminders/<reminderId>`: cancel a
/// pending reminder; `404 reminder_not_found` when it has fired, was
/// cancelled, or never was.
pub(super) async fn cancel(
    State(app): State<Arc<App>>,
    PathParams((slug, id, reminder)): PathParams<(String, String, String)>,
    Caller(caller): Caller,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    super::caller::check_owner(&session, caller.as_ref())?;
    let cancelled = app
        .sessions
        .cancel_reminder(session.id(), &reminder)
        .await
        .map_err(unavailable)?;
    if !cancelled {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "reminder_not_found",
            format!(
                "session `{id}` has no pending reminder `{reminder}` (it fired, was cancelled, \
                 or never was)"
            ),
        ));
    }
    Ok(Json(json!({ "ok": true, "cancelled": reminder })))
}

/// The calls reminders fire, made as calls in their session over the HTTP
/// API are: parked on the board while they wait.
pub(crate) struct BoardReminderCalls(
    /// The server (weak: the firing loop must not keep it alive).
    pub Weak<App>,
);

impl ReminderCalls for BoardReminderCalls {
    fn options(&self, session: Arc<Session>, _call_id: &str) -> CallOptions {
        match self.0.upgrade() {
            Some(app) => parked_options(&app, session, ParkSignal::new().0),
            None => CallOptions::new(session),
        }
    }

    fn finished(&self, call_id: &str, outcome: &Outcome) {
        if let Some(app) = self.0.upgrade() {
            app.board.finish(call_id, outcome);
        }
    }
}
