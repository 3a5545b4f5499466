//! Where a session store's pending reminders are kept, behind one trait:
//! each session's folder on one machine ([`ReminderBook`], each change off
//! the runtime), Redis for a fleet (`fleet_reminders.rs`).

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};

use super::reminders::{Reminder, ReminderBook, ReminderError};

/// A store of pending reminders, each taken once when it is due.
#[async_trait::async_trait]
pub(crate) trait ReminderStore: Send + Sync {
    /// Keep `reminder` durably, within the bounds on pending reminders.
    async fn schedule(&self, reminder: Reminder) -> Result<Reminder, ReminderError>;

    /// The session's pending reminders, soonest first.
    async fn pending(&self, session: &str) -> Result<Vec<Reminder>, ReminderError>;

    /// Cancel the session's pending reminder `id`: `false` when it has none
    /// by that id.
    async fn cancel(&self, session: &str, id: &str) -> Result<bool, ReminderError>;

    /// The reminders due at `now` that this server takes (no other server
    /// gets them), soonest first.
    async fn take_due(&self, now: DateTime<Utc>) -> Result<Vec<Reminder>, ReminderError>;

    /// When the soonest pending reminder is due.
    async fn next_due(&self) -> Result<Option<DateTime<Utc>>, ReminderError>;

    /// How soon to ask [`ReminderStore::next_due`] again when it names
    /// nothing sooner: `None` when only this server adds reminders (it is
    /// woken when it does), else the poll that sees another server's.
    fn poll(&self) -> Option<TimeDelta>;
}

/// The reminders of one machine's sessions, one file each in its folder.
pub(crate) struct LocalReminders(pub(crate) Arc<ReminderBook>);

/// A blocking task that could not run or finish, as a reminder's failure.
fn io(error: impl Into<anyhow::Error>) -> ReminderError {
    ReminderError::Io(error.into())
}

#[async_trait::async_trait]
impl ReminderStore for LocalReminders {
    async fn schedule(&self, reminder: Reminder) -> Result<Reminder, ReminderError> {
        let book = Arc::clone(&self.0);
        crate::blocking::run(move |_| book.schedule(reminder))
            .await
            .map_err(io)?
    }

    async fn pending(&self, session: &str) -> Result<Vec<Reminder>, ReminderError> {
        Ok(self.0.pending(session))
    }

    async fn cancel(&self, session: &str, id: &str) -> Result<bool, ReminderError> {
        let (book, session, id) = (Arc::clone(&self.0), session.to_string(), id.to_string());
        crate::blocking::run(move |_| book.cancel(&session, &id))
            .await
            .map_err(io)?
    }

    async fn take_due(&self, now: DateTime<Utc>) -> Result<Vec<Reminder>, ReminderError> {
        // Taking a reminder removes its file durably: off the runtime.
        let book = Arc::clone(&self.0);
        tokio::task::spawn_blocking(move || book.take_due(now))
            .await
            .map_err(io)
    }

    async fn next_due(&self) -> Result<Option<DateTime<Utc>>, ReminderError> {
        Ok(self.0.next_due())
    }

    fn poll(&self) -> Option<TimeDelta> {
        None
    }
}
