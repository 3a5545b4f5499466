//! The reminders of the store's sessions: on disk, or in Redis for a fleet.

use super::*;

/// How often a server looks for due reminders in Redis when none it knows
/// of is due sooner (another server may have set one).
const SHARED_REMINDER_POLL: chrono::TimeDelta = chrono::TimeDelta::seconds(1);

impl SessionStore {
    /// Keep `reminder` (and its session until it is due), within the
    /// bounds on pending reminders: on disk, or in Redis for a fleet.
    pub async fn schedule_reminder(
        self: &Arc<Self>,
        reminder: Reminder,
    ) -> Result<Reminder, ReminderError> {
        let kept = match &self.shared {
            Some(shared) => {
                self.keep_until(&reminder.session_id, reminder.fire_at)
                    .await
                    .map_err(|e| ReminderError::Io(e.into()))?;
                shared.reminders().schedule(reminder).await?
            }
            None => {
                // Written and fsynced: off the runtime.
                let store = Arc::clone(self);
                crate::blocking::run(move |_| store.reminders.schedule(reminder))
                    .await
                    .map_err(|e| ReminderError::Io(e.into()))??
            }
        };
        self.reminders.notify_added();
        Ok(kept)
    }

    /// The session's pending reminders, soonest first.
    pub async fn pending_reminders(&self, session: &str) -> Result<Vec<Reminder>, ReminderError> {
        match &self.shared {
            Some(shared) => shared.reminders().pending(session).await,
            None => Ok(self.reminders.pending(session)),
        }
    }

    /// Cancel the session's pending reminder `id`: `false` when it has none
    /// by that id.
    pub async fn cancel_reminder(
        self: &Arc<Self>,
        session: &str,
        id: &str,
    ) -> Result<bool, ReminderError> {
        match &self.shared {
            Some(shared) => shared.reminders().cancel(session, id).await,
            None => {
                let (store, session, id) = (Arc::clone(self), session.to_string(), id.to_string());
                crate::blocking::run(move |_| store.reminders.cancel(&session, &id))
                    .await
                    .map_err(|e| ReminderError::Io(e.into()))?
            }
        }
    }

    /// The reminders due now that this server takes (each is taken once,
    /// by one server), soonest first.
    pub async fn take_due_reminders(self: &Arc<Self>) -> Vec<Reminder> {
        let taken = match &self.shared {
            Some(shared) => shared.reminders().take_due(Utc::now()).await,
            None => {
                // Taking a reminder removes its file durably: off the runtime.
                let store = Arc::clone(self);
                tokio::task::spawn_blocking(move || store.reminders.take_due(Utc::now()))
                    .await
                    .map_err(|e| ReminderError::Io(e.into()))
            }
        };
        self.reminders_answered(taken.as_ref().err());
        taken.unwrap_or_default()
    }

    /// Log a failure of the reminders' store once per outage (and its
    /// end); whether it answered.
    fn reminders_answered(&self, failure: Option<&impl std::fmt::Display>) -> bool {
        match failure {
            None => {
                if self.reminders_failing.swap(false, Ordering::Relaxed) {
                    tracing::info!("reminders: their store answers again");
                }
                true
            }
            Some(e) => {
                if self.reminders_failing.swap(true, Ordering::Relaxed) {
                    tracing::debug!("reminders: {e}");
                } else {
                    tracing::error!("reminders cannot be read (logged once until they can): {e}");
                }
                false
            }
        }
    }

    /// When the soonest pending reminder is due; shared, at most a second
    /// from now, since another server may set one.
    pub async fn next_reminder_due(&self) -> Option<DateTime<Utc>> {
        let Some(shared) = &self.shared else {
            return self.reminders.next_due();
        };
        let poll = Utc::now() + SHARED_REMINDER_POLL;
        let next = shared.reminders().next_due().await;
        if !self.reminders_answered(next.as_ref().err()) {
            return Some(poll);
        }
        Some(next.ok().flatten().map_or(poll, |due| due.min(poll)))
    }

    /// Keep the session `id` at least until `until` plus the retention
    /// period (a reminder is due then): the fleet's sweeps see it busy.
    pub async fn keep_until(&self, id: &str, until: DateTime<Utc>) -> Result<(), Unavailable> {
        match &self.shared {
            None => Ok(()),
            Some(shared) => shared
                .keep_until(id, until.timestamp_millis())
                .await
                .map_err(Unavailable),
        }
    }
}
