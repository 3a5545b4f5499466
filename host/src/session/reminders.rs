//! Reminders: what a tool asked to come back to its session later — a
//! message, or a call of a tool — kept durably with the session and handed
//! out once when due.
//!
//! Each pending reminder is a file, `<session dir>/reminders/<id>.json`,
//! written atomically: removing the session's directory ends its
//! reminders. [`ReminderBook::take_due`] removes a reminder's file (and
//! fsyncs the removal) before it hands the reminder out, so a reminder
//! fires at most once even if the process dies while firing it; one that
//! fell due while the server was down is handed out when it starts. A
//! fleet keeps them in Redis instead (`fleet_reminders.rs`); the session
//! store chooses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The most reminders one session may have pending.
pub const MAX_PENDING_PER_SESSION: usize = 64;
/// The most reminders one store may have pending.
pub const MAX_PENDING: usize = 10_000;
/// How far ahead a reminder may be scheduled, in days.
pub const MAX_DAYS_AHEAD: i64 = 366;
/// The most bytes a reminder's message, or its call's input as JSON, may have.
pub const MAX_PAYLOAD_BYTES: usize = 64 << 10;
/// The longest chain of reminders: a call that this many reminders led to
/// (each scheduled by the call the one before made) may not schedule
/// another, so no tool keeps itself running by reminders for ever.
pub const MAX_CHAIN: u32 = 8;

/// The folder of a session's reminders, inside its directory.
const REMINDERS_DIR: &str = "reminders";

/// What a reminder does when it fires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ReminderAction {
    /// Append a `user.message` event.
    Message {
        /// The message.
        message: String,
    },
    /// Call a tool in the session, through the pipeline.
    Call {
        /// The tool.
        tool: String,
        /// Its input.
        input: Value,
    },
}

/// The call that scheduled a reminder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduledBy {
    /// The call's id.
    pub call_id: String,
    /// The tool it called: its grant decides which tools the reminder may call.
    pub tool: String,
    /// How many reminders led to that call (0 for a client's call): the
    /// call this reminder makes is one more.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub chain: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A pending reminder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reminder {
    /// Its id (`rem_…`).
    pub id: String,
    /// The session it fires in.
    pub session_id: String,
    /// When it fires.
    pub fire_at: DateTime<Utc>,
    /// What it does.
    pub action: ReminderAction,
    /// Who scheduled it.
    pub scheduled_by: ScheduledBy,
    /// When it was scheduled.
    pub created_at: DateTime<Utc>,
}

impl Reminder {
    /// The origin its call is recorded with: `reminder(<scheduling call id>)`.
    pub fn origin(&self) -> String {
        format!("reminder({})", self.scheduled_by.call_id)
    }

    /// The reminder as clients see it.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The payload of the `reminder.fired` event it leaves: what it is, and
    /// what came of it (`outcome`).
    pub fn fired_event(&self, outcome: Value) -> Value {
        json!({
            "reminderId": self.id,
            "origin": self.origin(),
            "scheduledBy": self.scheduled_by,
            "fireAt": self.fire_at.to_rfc3339(),
            "action": self.action,
            "outcome": outcome,
        })
    }
}

/// Why a reminder was not scheduled or cancelled.
#[derive(Debug, thiserror::Error)]
pub enum ReminderError {
    /// The session, or the store, has as many pending as it may.
    #[error("{0}")]
    Full(String),
    /// It could not be written or removed.
    #[error("cannot store the reminder: {0:#}")]
    Io(#[from] anyhow::Error),
}

/// The pending reminders of one session store, by id.
#[derive(Debug)]
pub struct ReminderBook {
    /// The store's folder: a session's reminders are under `<root>/<id>`.
    root: PathBuf,
    pending: Mutex<BTreeMap<String, Reminder>>,
    /// Held by a schedule or a cancel while it writes: they see each
    /// other's counts, and `pending` is never held across a disk.
    writing: Mutex<()>,
    /// Woken when a reminder is added, so the scheduler looks again.
    added: tokio::sync::Notify,
}

impl ReminderBook {
    /// An empty book for the store kept under `root`.
    pub(super) fn new(root: PathBuf) -> Self {
        Self {
            root,
            pending: Mutex::default(),
            writing: Mutex::default(),
            added: tokio::sync::Notify::new(),
        }
    }

    fn file(&self, session: &str, id: &str) -> PathBuf {
        self.root
            .join(session)
            .join(REMINDERS_DIR)
            .join(format!("{id}.json"))
    }

    /// Load the reminders of the session stored in `dir` (its folder).
    /// One that cannot be read, or names another session, is reported and
    /// left in place.
    pub(super) fn load(&self, dir: &Path, session: &str) {
        let Ok(entries) = std::fs::read_dir(dir.join(REMINDERS_DIR)) else {
            return;
        };
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        for path in entries.flatten().map(|e| e.path()) {
            if path.extension().is_none_or(|ext| ext != "json") {
                continue;
            }
            let read = std::fs::read(&path)
                .map_err(anyhow::Error::from)
                .and_then(|bytes| Ok(serde_json::from_slice::<Reminder>(&bytes)?));
            match read {
                Ok(reminder)
                    if reminder.session_id == session
                        && path.file_stem() == Some(reminder.id.as_ref()) =>
                {
                    pending.insert(reminder.id.clone(), reminder);
                }
                Ok(_) => tracing::warn!(
                    "skipping reminder {}: it names another session or id",
                    path.display()
                ),
                Err(e) => tracing::warn!("skipping reminder {}: {e:#}", path.display()),
            }
        }
    }

    /// Keep `reminder` durably, within the bounds on pending reminders.
    pub fn schedule(&self, reminder: Reminder) -> Result<Reminder, ReminderError> {
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let session = &reminder.session_id;
        {
            let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            if pending.len() >= MAX_PENDING {
                return Err(ReminderError::Full(format!(
                    "the server has {MAX_PENDING} reminders pending already, the most it keeps"
                )));
            }
            if pending
                .values()
                .filter(|r| &r.session_id == session)
                .count()
                >= MAX_PENDING_PER_SESSION
            {
                return Err(ReminderError::Full(format!(
                    "session `{session}` has {MAX_PENDING_PER_SESSION} reminders pending \
                     already, the most a session may; cancel one first"
                )));
            }
        }
        let path = self.file(session, &reminder.id);
        let dir = path.parent().unwrap_or(&self.root);
        // Only the reminders' folder is made: a session ended meanwhile
        // (its folder removed) is not made again around a reminder.
        match std::fs::create_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ReminderError::Full(format!(
                    "session `{session}` has ended: it takes no reminder"
                )));
            }
            Err(e) => {
                return Err(anyhow::Error::from(e)
                    .context(format!("cannot create {}", dir.display()))
                    .into());
            }
        }
        crate::files::write_atomically(
            &path,
            &serde_json::to_vec_pretty(&reminder).context("JSON")?,
        )?;
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(reminder.id.clone(), reminder.clone());
        self.added.notify_one();
        Ok(reminder)
    }

    /// The session's pending reminders, soonest first.
    pub fn pending(&self, session: &str) -> Vec<Reminder> {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let mut found: Vec<Reminder> = pending
            .values()
            .filter(|r| r.session_id == session)
            .cloned()
            .collect();
        found.sort_by(|a, b| (a.fire_at, &a.id).cmp(&(b.fire_at, &b.id)));
        found
    }

    /// The sessions with a reminder pending.
    pub fn sessions_pending(&self) -> std::collections::HashSet<String> {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.values().map(|r| r.session_id.clone()).collect()
    }

    /// Cancel the session's pending reminder `id`: `false` when it has none
    /// by that id.
    pub fn cancel(&self, session: &str, id: &str) -> Result<bool, ReminderError> {
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        // Out of the index first, so the firing loop cannot take it while
        // its file is removed; back in if the file stays.
        let taken = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            if pending.get(id).is_none_or(|r| r.session_id != session) {
                return Ok(false);
            }
            pending.remove(id)
        };
        if let Err(e) = crate::files::remove_durably(&self.file(session, id)) {
            if let Some(reminder) = taken {
                self.pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(id.to_string(), reminder);
            }
            return Err(anyhow::Error::from(e)
                .context(format!("cannot remove reminder `{id}`"))
                .into());
        }
        Ok(true)
    }

    /// Forget the reminders of `sessions` once `remove` has taken their
    /// folders (and reminder files) away; no reminder is scheduled between
    /// the two.
    pub(super) fn forget_sessions(&self, sessions: &[String], remove: impl FnOnce()) {
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        remove();
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.retain(|_, r| !sessions.contains(&r.session_id));
    }

    /// When the soonest pending reminder is due.
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.values().map(|r| r.fire_at).min()
    }

    /// The reminders due at `now`, each removed from disk before it is
    /// returned: a reminder whose file could not be removed is dropped
    /// unfired (and reported), never handed out twice.
    pub fn take_due(&self, now: DateTime<Utc>) -> Vec<Reminder> {
        // Out of the index under the lock; the files are removed (and
        // synced) after it is released, so `pending` never waits on a disk.
        let due: Vec<Reminder> = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            let ids: Vec<String> = pending
                .values()
                .filter(|r| r.fire_at <= now)
                .map(|r| r.id.clone())
                .collect();
            ids.iter().filter_map(|id| pending.remove(id)).collect()
        };
        let mut taken: Vec<Reminder> = due
            .into_iter()
            .filter(
                |r| match crate::files::remove_durably(&self.file(&r.session_id, &r.id)) {
                    Ok(removed) => removed,
                    Err(e) => {
                        tracing::error!("reminder `{}` not fired: cannot remove it: {e}", r.id);
                        false
                    }
                },
            )
            .collect();
        taken.sort_by_key(|r| r.fire_at);
        taken
    }

    /// Wake whoever waits in [`ReminderBook::added`].
    pub(super) fn notify_added(&self) {
        self.added.notify_one();
    }

    /// Wait until a reminder is added.
    pub async fn added(&self) {
        self.added.notified().await;
    }
}

#[cfg(test)]
impl Reminder {
    /// A message reminder `id` in `session`, due `in_ms` from now, for tests.
    pub(crate) fn sample(id: &str, session: &str, in_ms: i64) -> Self {
        Self {
            id: id.into(),
            session_id: session.into(),
            fire_at: Utc::now() + chrono::Duration::milliseconds(in_ms),
            action: ReminderAction::Message {
                message: "m".into(),
            },
            scheduled_by: ScheduledBy {
                call_id: "call_1".into(),
                tool: "t".into(),
                chain: 0,
            },
            created_at: Utc::now(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reminder(id: &str, session: &str, in_ms: i64) -> Reminder {
        Reminder::sample(id, session, in_ms)
    }

    /// A book under `root`, whose sessions `ses_a` and `ses_b` exist.
    fn book(root: &Path) -> ReminderBook {
        for session in ["ses_a", "ses_b"] {
            std::fs::create_dir_all(root.join(session)).unwrap();
        }
        ReminderBook::new(root.to_path_buf())
    }

    #[test]
    fn an_ended_session_takes_no_reminder_and_is_not_made_again() {
        let root = tempfile::tempdir().unwrap();
        let book = book(root.path());
        let err = book
            .schedule(reminder("rem_x", "ses_gone", 1000))
            .unwrap_err();
        assert!(err.to_string().contains("has ended"), "{err}");
        assert!(!root.path().join("ses_gone").exists());
        assert!(book.pending("ses_gone").is_empty());
    }

    #[test]
    fn a_due_reminder_is_taken_once_and_its_file_goes_first() {
        let root = tempfile::tempdir().unwrap();
        let book = book(root.path());
        book.schedule(reminder("rem_due", "ses_a", -1)).unwrap();
        book.schedule(reminder("rem_later", "ses_a", 3_600_000))
            .unwrap();
        let file = root.path().join("ses_a/reminders/rem_due.json");
        assert!(file.is_file());

        let taken = book.take_due(Utc::now());
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].id, "rem_due");
        assert!(!file.exists(), "removed before it is handed out");
        assert!(book.take_due(Utc::now()).is_empty(), "never twice");

        let reloaded = ReminderBook::new(root.path().to_path_buf());
        reloaded.load(&root.path().join("ses_a"), "ses_a");
        let pending: Vec<String> = reloaded
            .pending("ses_a")
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(pending, ["rem_later"]);
    }

    #[test]
    fn a_file_naming_another_session_is_skipped() {
        let root = tempfile::tempdir().unwrap();
        let book = book(root.path());
        book.schedule(reminder("rem_x", "ses_a", 1000)).unwrap();
        let moved = root.path().join("ses_b/reminders");
        std::fs::create_dir_all(&moved).unwrap();
        std::fs::rename(
            root.path().join("ses_a/reminders/rem_x.json"),
            moved.join("rem_x.json"),
        )
        .unwrap();
        let reloaded = ReminderBook::new(root.path().to_path_buf());
        reloaded.load(&root.path().join("ses_b"), "ses_b");
        assert!(reloaded.pending("ses_b").is_empty());
        assert!(reloaded.pending("ses_a").is_empty());
    }

    #[test]
    fn a_session_holds_at_most_its_share() {
        let root = tempfile::tempdir().unwrap();
        let book = book(root.path());
        for n in 0..MAX_PENDING_PER_SESSION {
            book.schedule(reminder(&format!("rem_{n}"), "ses_a", 1000))
                .unwrap();
        }
        let err = book
            .schedule(reminder("rem_more", "ses_a", 1000))
            .unwrap_err();
        assert!(err.to_string().contains("64 reminders pending"), "{err}");
        book.schedule(reminder("rem_other", "ses_b", 1000)).unwrap();
        assert!(book.cancel("ses_a", "rem_0").unwrap());
        assert!(!book.cancel("ses_b", "rem_1").unwrap(), "another session's");
    }
}
