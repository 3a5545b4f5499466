//! Reminders (`toolhost:tool/reminders`): the SDK page's
//! `ctx.host.reminders`. A reminder comes back to this call's session
//! later, with a message (a `user.message` event) or a call of a tool
//! (through the pipeline, with that tool's permission policy, recorded with
//! origin `reminder(<this call's id>)`).
//!
//! The operator grants them: `reminders = { tools = ["x"] }` in the tool's
//! `[tools.<name>]` schedules messages and calls of `x`. A read call may
//! list them but not schedule or cancel. Only a session the server keeps
//! takes reminders.
//!
//! ```no_run
//! use std::time::Duration;
//! use toolhost_sdk::reminders::{self, When};
//! # fn run() -> Result<(), toolhost_sdk::reminders::Error> {
//! let soon = reminders::message(When::After(Duration::from_secs(3600)), "Check the deploy")?;
//! reminders::call(When::At("2027-01-01T09:00:00Z".into()), "report", &serde_json::json!({}))?;
//! reminders::cancel(&soon.id)?;
//! # Ok(()) }
//! ```

use std::fmt;
use std::time::Duration;

use serde_json::Value;

use crate::bindings::toolhost::tool::reminders as wit;

/// When a reminder fires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum When {
    /// At this instant (RFC 3339, with a timezone).
    At(String),
    /// After this long.
    After(Duration),
}

/// What a reminder does when it fires.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Append this message to the session.
    Message(String),
    /// Call this tool with this input in the session.
    Call {
        /// The tool.
        tool: String,
        /// Its input.
        input: Value,
    },
}

/// A pending reminder.
#[derive(Debug, Clone, PartialEq)]
pub struct Reminder {
    /// Its id (`rem_…`).
    pub id: String,
    /// The session it fires in.
    pub session: String,
    /// When it fires (RFC 3339).
    pub fire_at: String,
    /// What it does.
    pub action: Action,
    /// The call that scheduled it.
    pub scheduled_by: String,
}

/// Why the host did not schedule, list or cancel: not granted, a read
/// call, a tool the grant does not list, an input its schema refuses, a
/// session that ends with the call, too far ahead, or too many pending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "reminders: {}", self.0)
    }
}

impl std::error::Error for Error {}

impl From<wit::Reminder> for Reminder {
    fn from(r: wit::Reminder) -> Self {
        Self {
            id: r.id,
            session: r.session,
            fire_at: r.fire_at,
            action: match r.action {
                wit::ReminderAction::Message(message) => Action::Message(message),
                wit::ReminderAction::Call(call) => Action::Call {
                    tool: call.tool,
                    input: serde_json::from_str(&call.input).unwrap_or(Value::Null),
                },
            },
            scheduled_by: r.scheduled_by,
        }
    }
}

fn when_to_wit(when: When) -> wit::ReminderTime {
    match when {
        When::At(instant) => wit::ReminderTime::At(instant),
        When::After(delay) => {
            wit::ReminderTime::AfterMs(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX))
        }
    }
}

/// Schedule `action` in this call's session at `when`.
pub fn schedule(when: When, action: Action) -> Result<Reminder, Error> {
    let action = match action {
        Action::Message(message) => wit::ReminderAction::Message(message),
        Action::Call { tool, input } => wit::ReminderAction::Call(wit::ReminderCall {
            tool,
            input: input.to_string(),
        }),
    };
    wit::schedule(&when_to_wit(when), &action)
        .map(Reminder::from)
        .map_err(Error)
}

/// Schedule `message` to be appended to this call's session at `when`.
pub fn message(when: When, message: impl Into<String>) -> Result<Reminder, Error> {
    schedule(when, Action::Message(message.into()))
}

/// Schedule a call of `tool` with `input` in this call's session at `when`.
pub fn call(when: When, tool: impl Into<String>, input: &Value) -> Result<Reminder, Error> {
    schedule(
        when,
        Action::Call {
            tool: tool.into(),
            input: input.clone(),
        },
    )
}

/// The session's pending reminders, soonest first.
pub fn list() -> Result<Vec<Reminder>, Error> {
    wit::list_reminders()
        .map(|all| all.into_iter().map(Reminder::from).collect())
        .map_err(Error)
}

/// Cancel the session's pending reminder `id`; `false` when there is none
/// by that id.
pub fn cancel(id: &str) -> Result<bool, Error> {
    wit::cancel_reminder(id).map_err(Error)
}
