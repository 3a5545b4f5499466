//! A parked call mirrored into the fleet's Redis: its status and outcome
//! written there, and what another server receives for it applied here.

use super::*;

impl Board {
    /// Tell the fleet that `parked` (call `call_id`) waits here, before
    /// anyone is told it waits: from then on its status and outcome are
    /// mirrored into Redis, and what another server receives for it is
    /// applied here. Without Redis it can still be answered here.
    pub(super) async fn share(&self, call_id: &str, parked: &Arc<Parked>) {
        let Some(fleet) = &self.fleet else {
            return;
        };
        let status = parked.status.borrow().0;
        let wait = parked.waits.load(Ordering::Relaxed);
        if parked.shared.swap(true, Ordering::Relaxed) {
            // Waiting again (a question after its approval): its mirror
            // goes on; the fleet must see it waits before anyone is told.
            if let Err(e) = fleet.wait_again(call_id, status.name(), wait).await {
                tracing::warn!(call = call_id, "only this server can answer the call: {e}");
            }
            return;
        }
        let parked_call = (
            call_id,
            parked.tool_name.as_str(),
            parked.session_id.as_str(),
        );
        match fleet.park(parked_call, status.name(), wait).await {
            Ok(lease) => {
                tokio::spawn(mirror(
                    fleet.clone(),
                    call_id.to_string(),
                    parked.status.subscribe(),
                    lease,
                ));
                if let Some(applier) = self.applier.get() {
                    tokio::spawn(take_answers(
                        fleet.clone(),
                        call_id.to_string(),
                        Arc::downgrade(parked),
                        applier.clone(),
                    ));
                }
            }
            Err(e) => {
                parked.shared.store(false, Ordering::Relaxed);
                tracing::warn!(call = call_id, "only this server can answer the call: {e}");
            }
        }
    }

    /// Tell the fleet where call `call_id`'s approval stands: waiting until
    /// `expires_at`, or (`None`) resolved. A failure is logged: the call
    /// can still be approved through any server, only the fleet's list
    /// misses it.
    pub(super) async fn share_approval(
        &self,
        call_id: &str,
        expires_at: Option<chrono::DateTime<chrono::Utc>>,
    ) {
        let (Some(fleet), Some(entry)) = (&self.fleet, self.approvals.view(call_id)) else {
            return;
        };
        let shared = match expires_at {
            Some(at) => fleet.approvals().asked(call_id, entry, at).await,
            None => fleet.approvals().resolved(call_id, &entry).await,
        };
        if let Err(e) = shared {
            tracing::warn!(
                call = call_id,
                "the fleet's list of approvals misses this change: {e}"
            );
        }
    }
}

/// Mirror call `call_id`'s status and outcome into Redis until it is done,
/// holding `lease`, which says this server runs it.
async fn mirror(
    fleet: Arc<FleetCalls>,
    call_id: String,
    mut status: watch::Receiver<(Status, Option<Outcome>)>,
    lease: Lease,
) {
    loop {
        let (now, outcome) = status.borrow_and_update().clone();
        let mirrored = match &outcome {
            Some(outcome) if now == Status::Done => {
                let (code, body) = answered(outcome);
                fleet.finish(&call_id, code, &body).await
            }
            _ => fleet.set_status(&call_id, now.name()).await,
        };
        if let Err(e) = mirrored {
            tracing::warn!(call = %call_id, "the fleet may not see where the call stands: {e}");
        }
        if now == Status::Done || status.changed().await.is_err() {
            break;
        }
    }
    lease.release().await;
}

/// Apply, with `applier`, what other servers receive for call `call_id`
/// each time it waits, until it is done. Only an answer given while the
/// call was in its current wait is applied; one is never cut off halfway
/// through being applied. Holds the call weakly: once the board forgets
/// it (its session ended), its status ends and so does this.
async fn take_answers(
    fleet: Arc<FleetCalls>,
    call_id: String,
    parked: std::sync::Weak<Parked>,
    applier: Applier,
) {
    let Some(mut status) = parked.upgrade().map(|p| p.status.subscribe()) else {
        return;
    };
    loop {
        let now = match status
            .wait_for(|s| s.0.is_waiting() || s.0 == Status::Done)
            .await
        {
            Ok(now) => now.0,
            Err(_) => return,
        };
        if now == Status::Done {
            return;
        }
        let (given_in, answer) = tokio::select! {
            taken = fleet.answer(&call_id) => taken,
            left = status.wait_for(|s| !s.0.is_waiting()) => {
                if left.is_err() {
                    return;
                }
                continue;
            }
        };
        let Some(waits) = parked.upgrade().map(|p| p.waits.load(Ordering::Relaxed)) else {
            return;
        };
        if given_in != waits {
            tracing::debug!(call = %call_id, "an answer to an earlier wait is dropped");
            continue;
        }
        if let Err(e) = applier(call_id.clone(), answer).await {
            tracing::warn!(call = %call_id, "an answer from another server: {e}");
        }
    }
}

/// The HTTP status and body `GET …/calls/<id>` answers a finished call with.
fn answered(outcome: &Outcome) -> (u16, serde_json::Value) {
    match outcome {
        Ok(result) => (200, serde_json::to_value(&**result).unwrap_or_default()),
        Err(error) => {
            let error = ApiError::from(&**error);
            (error.status.as_u16(), error.body())
        }
    }
}
