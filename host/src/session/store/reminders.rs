//! The reminders of the store's sessions, in its [`ReminderStore`]: on
//! disk, or in Redis for a fleet.

use super::*;

impl SessionStore {
    /// Keep `reminder` (and its session until it is due), within the
    /// bounds on pending reminders.
    pub async fn schedule_reminder(&self, reminder: Reminder) -> Result<Reminder, ReminderError> {
        self.keep_until(&reminder.session_id, reminder.fire_at)
            .await
            .map_err(|e| ReminderError::Io(e.into()))?;
        let kept = self.reminder_store.schedule(reminder).await?;
        self.reminders.notify_added();
        Ok(kept)
    }

    /// The session's pending reminders, soonest first.
    pub async fn pending_reminders(&self, session: &str) -> Result<Vec<Reminder>, ReminderError> {
        self.reminder_store.pending(session).await
    }

    /// Cancel the session's pending reminder `id`: `false` when it has none
    /// by that id.
    pub async fn cancel_reminder(&self, session: &str, id: &str) -> Result<bool, ReminderError> {
        self.reminder_store.cancel(session, id).await
    }

    /// The reminders due now that this server takes (each is taken once,
    /// by one server), soonest first.
    pub async fn take_due_reminders(&self) -> Vec<Reminder> {
        let taken = self.reminder_store.take_due(Utc::now()).await;
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

    /// When the soonest pending reminder is due; where other servers add
    /// reminders too, at most the store's poll from now.
    pub async fn next_reminder_due(&self) -> Option<DateTime<Utc>> {
        let next = self.reminder_store.next_due().await;
        let answered = self.reminders_answered(next.as_ref().err());
        let Some(poll) = self.reminder_store.poll().map(|every| Utc::now() + every) else {
            return next.ok().flatten();
        };
        if !answered {
            return Some(poll);
        }
        Some(next.ok().flatten().map_or(poll, |due| due.min(poll)))
    }

    /// Keep the session `id` at least until `until` plus the retention
    /// period (a reminder is due then): the fleet's sweeps see it busy.
    pub async fn keep_until(&self, id: &str, until: DateTime<Utc>) -> Result<(), Unavailable> {
        self.backend.keep_until(id, until).await
    }
}
