//! Firing reminders: each due reminder of the attached session store is
//! taken once ([`ReminderBook::take_due`]) and either appends its message to
//! its session or calls its tool through the pipeline, with that tool's
//! permission policy and limits, recorded with `origin`
//! `reminder(<scheduling call id>)`. Either way the session records
//! `reminder.fired` with what came of it.
//!
//! [`ReminderBook::take_due`]: crate::session::reminders::ReminderBook::take_due

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::api::{CallInput, CallOptions, NoApprover, new_call_id};
use crate::envelope::CallResult;
use crate::error::CallError;
use crate::host::Host;
use crate::host::calls::reminder_limits::SessionRates;
use crate::session::reminders::{Reminder, ReminderAction};
use crate::session::{EventData, EventKind, Session, SessionStore};

/// The longest the firing loop sleeps before it looks again.
const MAX_NAP: Duration = Duration::from_secs(60);
/// How long a reminder's call waits for its session's write slot.
const BUSY_WAIT: Duration = Duration::from_secs(60);
/// How long it waits before trying again after losing the slot to a race.
const BUSY_RETRY: Duration = Duration::from_millis(100);
/// How much later a taken reminder is tried again when its session's
/// store did not answer.
const POSTPONED_BY: chrono::TimeDelta = chrono::TimeDelta::seconds(5);

/// How a surface makes the calls reminders fire: the options a call in a
/// session gets there (who approves it, who answers its custom tools and
/// questions), and what it does once the call is over.
pub trait ReminderCalls: Send + Sync {
    /// The options for the reminder's call `call_id` in `session`.
    fn options(&self, session: Arc<Session>, call_id: &str) -> CallOptions;

    /// The call `call_id` ended with `outcome`.
    fn finished(&self, call_id: &str, outcome: &Result<Arc<CallResult>, Arc<CallError>>) {
        let _ = (call_id, outcome);
    }
}

/// Reminder calls where nobody can approve: an `always_ask` tool's call is
/// refused, saying how to approve (`toolhost mcp`, which has no approvals
/// API).
pub struct UnattendedReminderCalls(
    /// How to approve on the surface in use, for the refusal.
    pub String,
);

impl ReminderCalls for UnattendedReminderCalls {
    fn options(&self, session: Arc<Session>, _call_id: &str) -> CallOptions {
        CallOptions::new(session).with_approver(Arc::new(NoApprover(self.0.clone())))
    }
}

impl Host {
    /// Fire the reminders of the session store attached to the host as
    /// they fall due, for as long as the returned future runs (a server
    /// spawns it and aborts it at shutdown). Returns at once when no store
    /// is attached.
    pub async fn fire_reminders(self: Arc<Self>, calls: Arc<dyn ReminderCalls>) {
        let Some(store) = self.sessions() else {
            return;
        };
        // Taken, then not fired because the store did not answer: kept
        // here (a taken reminder is in no store any more) and tried again.
        let mut postponed: Vec<Reminder> = Vec::new();
        let mut rates = SessionRates::default();
        loop {
            let now = Utc::now();
            rates.prune(now);
            let (mut due, later): (Vec<_>, Vec<_>) =
                postponed.drain(..).partition(|r| r.fire_at <= now);
            postponed = later;
            due.extend(store.take_due_reminders().await);
            for reminder in due {
                let session = match store.find(&reminder.session_id).await {
                    Ok(Some(session)) => session,
                    Ok(None) => {
                        tracing::info!("reminder `{}` dropped: its session ended", reminder.id);
                        continue;
                    }
                    Err(e) => {
                        tracing::warn!(
                            "reminder `{}` postponed by {} s: {e}",
                            reminder.id,
                            POSTPONED_BY.num_seconds()
                        );
                        postponed.push(Reminder {
                            fire_at: now + POSTPONED_BY,
                            ..reminder
                        });
                        continue;
                    }
                };
                session.touch();
                match reminder.action.clone() {
                    ReminderAction::Message { message } => {
                        deliver(&session, &reminder, message).await;
                        self.reminder_stats().message_delivered();
                    }
                    ReminderAction::Call { tool, input } => {
                        if let Err(next) = rates.take(&reminder.session_id, now) {
                            // Its session spent its budget: fired when it
                            // has one again, kept in the store meanwhile.
                            self.reminder_stats().deferred();
                            let deferred = Reminder {
                                fire_at: next,
                                ..reminder
                            };
                            if let Err(e) = store.schedule_reminder(deferred.clone()).await {
                                tracing::warn!("reminder `{}` held here: {e}", deferred.id);
                                postponed.push(deferred);
                            }
                            continue;
                        }
                        let host = Arc::clone(&self);
                        let calls = Arc::clone(&calls);
                        tokio::spawn(async move {
                            let _turn = host.reminder_stats().turn().await;
                            host.reminder_call(&session, &reminder, (tool, input), &*calls)
                                .await;
                        });
                    }
                }
            }
            let nap = next_nap(&store, postponed.iter().map(|r| r.fire_at).min()).await;
            tokio::select! {
                () = tokio::time::sleep(nap) => {}
                () = store.reminders().added() => {}
            }
        }
    }

    /// Make a reminder's call, if the grant of the tool that scheduled it
    /// still lists the tool; record what came of it.
    async fn reminder_call(
        &self,
        session: &Arc<Session>,
        reminder: &Reminder,
        (tool, input): (String, Value),
        calls: &dyn ReminderCalls,
    ) {
        let scheduler = &reminder.scheduled_by.tool;
        // The session's version, as the call will run it (a version it can
        // no longer run refuses the call below, with the reason).
        let registry = self
            .version_for(session)
            .await
            .map_or_else(|_| self.registry(), |v| v.registry().clone());
        let allowed = registry
            .get(scheduler)
            .and_then(|t| t.policy().grants.reminders.as_ref())
            .is_some_and(|grant| grant.tools.contains(&tool));
        if !allowed {
            let error = format!(
                "not called: the grant of `{scheduler}`, which scheduled it, no longer lets \
                 reminders call `{tool}`"
            );
            fired(session, reminder, json!({ "error": error }));
            return;
        }
        let call_id = new_call_id();
        let options = calls
            .options(Arc::clone(session), &call_id)
            .with_call_id(call_id.clone())
            .with_origin(reminder.origin())
            .with_reminder_chain(reminder.scheduled_by.chain.saturating_add(1));
        let outcome = self
            .call_when_free(&tool, input, &options)
            .await
            .map_err(Arc::new);
        calls.finished(&call_id, &outcome);
        let outcome = match &outcome {
            Ok(result) => json!({ "callId": call_id, "isError": result.is_error }),
            Err(error) => json!({
                "callId": call_id,
                "error": { "code": error.code(), "message": error.to_string() },
            }),
        };
        fired(session, reminder, outcome);
    }
}

impl Host {
    /// Call `tool`, waiting (up to [`BUSY_WAIT`]) while another write call
    /// holds the session: a reminder's call has no client to retry it. It
    /// waits for the slot to come free before each try, so a busy session
    /// costs no refused calls but the rare lost race.
    async fn call_when_free(
        &self,
        tool: &str,
        input: Value,
        options: &CallOptions,
    ) -> Result<Arc<CallResult>, CallError> {
        let started = tokio::time::Instant::now();
        loop {
            let free = options.session.write_slot_free();
            if tokio::time::timeout(BUSY_WAIT.saturating_sub(started.elapsed()), free)
                .await
                .is_err()
            {
                return Err(CallError::SessionBusy {
                    session: options.session.id().to_string(),
                });
            }
            match self
                .call(tool, CallInput::Json(input.clone()), options)
                .await
            {
                Err(CallError::SessionBusy { .. }) if started.elapsed() < BUSY_WAIT => {
                    tokio::time::sleep(BUSY_RETRY).await;
                }
                outcome => return outcome,
            }
        }
    }
}

/// Append a reminder's message to its session.
async fn deliver(session: &Session, reminder: &Reminder, message: String) {
    let event = json!({
        "message": message,
        "channel": session.channel(),
        "sessionId": session.id(),
        "origin": reminder.origin(),
        "reminderId": reminder.id,
        "from": {
            "sessionId": reminder.session_id,
            "callId": reminder.scheduled_by.call_id,
            "tool": reminder.scheduled_by.tool,
        },
    });
    let appended = session
        .events()
        .append(EventKind::UserMessage, EventData::Json(event))
        .await;
    let outcome = match appended {
        Ok(id) => json!({ "eventId": id }),
        Err(e) => json!({ "error": { "code": "state_unavailable", "message": e.to_string() } }),
    };
    fired(session, reminder, outcome);
}

fn fired(session: &Session, reminder: &Reminder, outcome: Value) {
    session.events().emit(
        EventKind::ReminderFired,
        EventData::Json(reminder.fired_event(outcome)),
    );
}

/// How long to sleep before the next reminder in `store`, or the one
/// held here `also`, is due (at most [`MAX_NAP`]).
async fn next_nap(store: &SessionStore, also: Option<DateTime<Utc>>) -> Duration {
    let stored = store.next_reminder_due().await;
    stored.into_iter().chain(also).min().map_or(MAX_NAP, |at| {
        (at - Utc::now())
            .to_std()
            .unwrap_or(Duration::ZERO)
            .min(MAX_NAP)
    })
}
