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

use super::App;
use super::board::{Outcome, ParkSignal};
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
    let pending = app.sessions.reminders().pending(session.id());
    let listed: Vec<Value> = pending.iter().map(|r| r.to_json()).collect();
    Ok(Json(json!({ "reminders": listed })))
}

/// `DELETE /<slug>/v1/sessions/<id>/reminders/<reminderId>`: cancel a
/// pending reminder; `404 reminder_not_found` when it has fired, was
/// cancelled, or never was.
pub(super) async fn cancel(
    State(app): State<Arc<App>>,
    PathParams((slug, id, reminder)): PathParams<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    app.check_slug(&slug)?;
    let session = find(&app, &id).await?;
    let cancelling = app.clone();
    let session_id = session.id().to_string();
    let wanted = reminder.clone();
    let cancelled = tokio::task::spawn_blocking(move || {
        cancelling.sessions.reminders().cancel(&session_id, &wanted)
    })
    .await
    .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?
    .map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "reminder_unavailable",
            e.to_string(),
        )
    })?;
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
