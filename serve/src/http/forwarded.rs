//! Answers another server of a fleet received for a call parked here,
//! applied through the same checks as if they had been posted here.

use std::sync::{Arc, Weak};

use toolhost::session::EventData;

use super::App;
use super::approvals::{DecisionBody, decision_of};
use super::board::Applier;
use super::fleet_calls::Forwarded;
use super::sessions::{Applied, apply_event};

/// Apply what another server received for a call parked here, through
/// the same checks as if it had been posted here.
pub(super) fn applier(app: Weak<App>) -> Applier {
    Arc::new(move |call_id: String, forwarded: Forwarded| {
        let app = app.clone();
        Box::pin(async move {
            let app = app.upgrade().ok_or("the server is stopping")?;
            match forwarded {
                Forwarded::Approval { body } => {
                    let body: DecisionBody =
                        serde_json::from_value(body).map_err(|e| e.to_string())?;
                    let decision = decision_of(body).map_err(|e| e.message)?;
                    app.board
                        .decide(&call_id, decision)
                        .map_err(|e| e.to_string())
                }
                Forwarded::Event { session, event } => {
                    let session = app
                        .sessions
                        .find(&session)
                        .await
                        .map_err(|e| e.to_string())?
                        .ok_or_else(|| format!("session `{session}` has ended"))?;
                    match apply_event(&app, &session, event).await {
                        Ok(Applied::Here(kind, payload)) => {
                            session.events().emit(kind, EventData::Json(payload));
                            Ok(())
                        }
                        Ok(Applied::NotHere(_)) => {
                            Err(format!("call `{call_id}` is not parked here"))
                        }
                        Err(e) => Err(e.message),
                    }
                }
            }
        })
    })
}
