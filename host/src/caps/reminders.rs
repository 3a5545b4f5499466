//! `toolhost:tool/reminders`: a call schedules a message, or a call of a
//! tool, to come back to its session later (the SDK page's
//! `ctx.host.reminders`).
//!
//! GrantCtx per tool (`reminders = { tools = ["x"] }`: messages, and calls
//! of the tools listed); a read call may list but not schedule or cancel.
//! Only a session the server stores takes reminders (a scratch session
//! ends with its call). The reminder is kept by the store's
//! [`ReminderBook`](crate::session::reminders::ReminderBook); the call that
//! fires it goes through the pipeline (`Host::fire_reminders`). A call's
//! input is checked against the tool's schema when it is scheduled (and
//! again when it fires). Each schedule counts in the receipt.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::grant_ctx::GrantCtx;
use super::{CallScope, Capability, Grants, OUTSIDE_A_CALL, Outside};
use crate::bindings::toolhost::tool::reminders as wit;
use crate::session::reminders::{
    MAX_CHAIN, MAX_DAYS_AHEAD, MAX_PAYLOAD_BYTES, Reminder, ReminderAction, ScheduledBy,
};
use crate::session::{Session, SessionStore, parse_instant};
use crate::usage::Meter;

/// The longest reminder id looked for (`rem_` and 32 hex digits).
const MAX_ID_BYTES: usize = 64;

/// A tool's `reminders` grant: it may schedule messages, and calls of the
/// tools listed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RemindersGrant {
    /// The tools a reminder may call (none by default).
    #[serde(default)]
    pub tools: Vec<String>,
}

impl RemindersGrant {
    /// Check the grant, naming the first entry that is not a tool's name.
    pub fn check(&self) -> anyhow::Result<()> {
        for tool in &self.tools {
            anyhow::ensure!(
                !tool.is_empty() && tool.len() <= 128,
                "`reminders.tools` entry {tool:?} must be a tool's name (1-128 characters)"
            );
        }
        Ok(())
    }

    /// The lock's entry: the tools reminders may call, sorted, each once.
    pub fn lock_entry(&self) -> Vec<String> {
        let mut tools = self.tools.clone();
        tools.sort();
        tools.dedup();
        tools
    }
}

/// What `grants` give a component importing `interface`, as `inspect`
/// shows it; `None` for another interface.
pub fn import_status(grants: &Grants, interface: &str) -> Option<String> {
    (interface == "toolhost:tool/reminders").then(|| match &grants.reminders {
        None => "NOT GRANTED (no reminders)".into(),
        Some(grant) if grant.tools.is_empty() => {
            "granted: message reminders (list only for read calls)".into()
        }
        Some(grant) => format!(
            "granted: message reminders and calls of {} (list only for read calls)",
            grant.tools.join(", ")
        ),
    })
}

/// Checks a reminder's call when it is scheduled: that `tool` is on the
/// host and that `input` (JSON text) fits its input schema. Returns the
/// input parsed, or what is wrong. Given by the pipeline, which knows the
/// tools.
pub type CallCheck = Arc<dyn Fn(&str, String) -> Result<serde_json::Value, String> + Send + Sync>;

/// Who schedules reminders, and where: what a call's reminders need.
pub struct Scheduler {
    /// The store keeping the session.
    pub store: Arc<SessionStore>,
    /// The call's session (one the store holds).
    pub session: Arc<Session>,
    /// The tool's grant.
    pub grant: RemindersGrant,
    /// Checks a reminder's call.
    pub check: CallCheck,
    /// Whether this call may schedule and cancel (not a read call).
    pub writable: bool,
    /// The call scheduling.
    pub call_id: String,
    /// The tool scheduling.
    pub tool: String,
    /// How many reminders led to the call scheduling (0 for a client's).
    pub chain: u32,
    /// The call's meter.
    pub meter: Arc<Meter>,
}

/// One instance's reminders: granted, or why not.
pub type RemindersCtx = GrantCtx<Scheduler>;

impl Capability for RemindersCtx {
    fn for_call(grants: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        Ok(
            match (&grants.reminders, scope.in_session, scope.sessions) {
                (None, _, _) => Self::refused(
                    "reminders are not granted to this tool (`reminders = { tools = [] }` in its \
                 [tools.<name>] schedules messages)",
                ),
                (_, None, _) => Self::refused("a prompt or resource request has no session"),
                (_, _, None) => Self::refused(
                    "this host keeps no sessions: a one-shot `tool call` cannot schedule reminders \
                 (run the tool under `toolhost serve` or `toolhost mcp`)",
                ),
                (Some(_), Some(call), Some(store)) if !store.holds(call.session) => Self::refused(
                    "this call's session ends with the call: reminders need a session the server \
                 keeps (create one, then call in it with `sessionId`)",
                ),
                (Some(grant), Some(call), Some(store)) => match scope.reminder_check {
                    None => Self::refused("the host's tools are not at hand"),
                    Some(check) => Self::granted(Scheduler {
                        store: Arc::clone(store),
                        session: Arc::clone(call.session),
                        grant: grant.clone(),
                        check: Arc::clone(check),
                        writable: !scope.read_only,
                        call_id: call.call_id.to_string(),
                        tool: call.tool.to_string(),
                        chain: call.reminder_chain,
                        meter: scope.meter.clone(),
                    }),
                },
            },
        )
    }

    fn outside_a_call(_: &Outside<'_>) -> anyhow::Result<Self> {
        Ok(Self::refused(OUTSIDE_A_CALL))
    }
}

impl RemindersCtx {
    fn writable(&self) -> Result<Arc<Scheduler>, String> {
        let scheduler = self.grant()?;
        if !scheduler.writable {
            return Err(format!(
                "`{}` may not schedule or cancel reminders in this call: the call is a read",
                scheduler.tool
            ));
        }
        Ok(scheduler)
    }
}

/// When `when` falls, checked against the horizon.
fn fire_at(when: &wit::ReminderTime, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let latest = now + chrono::Duration::days(MAX_DAYS_AHEAD);
    let at = match when {
        wit::ReminderTime::At(text) => parse_instant(text)?.with_timezone(&Utc),
        wit::ReminderTime::AfterMs(ms) => i64::try_from(*ms)
            .ok()
            .and_then(chrono::Duration::try_milliseconds)
            .and_then(|delay| now.checked_add_signed(delay))
            .unwrap_or(latest + chrono::Duration::days(1)),
    };
    if at > latest {
        return Err(format!(
            "a reminder may fire at most {MAX_DAYS_AHEAD} days ahead (by {})",
            latest.to_rfc3339()
        ));
    }
    Ok(at)
}

/// The action as stored, checked against the grant and the target's schema.
fn action(scheduler: &Scheduler, action: wit::ReminderAction) -> Result<ReminderAction, String> {
    match action {
        wit::ReminderAction::Message(message) => {
            if message.len() > MAX_PAYLOAD_BYTES {
                return Err(format!(
                    "the message is {} bytes; at most {MAX_PAYLOAD_BYTES} are accepted",
                    message.len()
                ));
            }
            Ok(ReminderAction::Message { message })
        }
        wit::ReminderAction::Call(call) => {
            if !scheduler.grant.tools.contains(&call.tool) {
                let listed = match scheduler.grant.tools.is_empty() {
                    true => "lists no tool".to_string(),
                    false => format!("lists {}", scheduler.grant.tools.join(", ")),
                };
                return Err(format!(
                    "`{}` may not schedule calls of {}: its grant `reminders.tools` {listed}",
                    scheduler.tool,
                    crate::shown::quoted(&call.tool)
                ));
            }
            if call.input.len() > MAX_PAYLOAD_BYTES {
                return Err(format!(
                    "the input is {} bytes; at most {MAX_PAYLOAD_BYTES} are accepted",
                    call.input.len()
                ));
            }
            let input = (scheduler.check)(&call.tool, call.input)?;
            Ok(ReminderAction::Call {
                tool: call.tool,
                input,
            })
        }
    }
}

fn to_wit(reminder: &Reminder) -> wit::Reminder {
    wit::Reminder {
        id: reminder.id.clone(),
        session: reminder.session_id.clone(),
        fire_at: reminder.fire_at.to_rfc3339(),
        action: match &reminder.action {
            ReminderAction::Message { message } => wit::ReminderAction::Message(message.clone()),
            ReminderAction::Call { tool, input } => wit::ReminderAction::Call(wit::ReminderCall {
                tool: tool.clone(),
                input: input.to_string(),
            }),
        },
        scheduled_by: reminder.scheduled_by.call_id.clone(),
    }
}

impl wit::Host for RemindersCtx {
    async fn schedule(
        &mut self,
        when: wit::ReminderTime,
        action: wit::ReminderAction,
    ) -> Result<wit::Reminder, String> {
        let scheduler = self.writable()?;
        scheduler.meter.reminder_scheduled();
        if scheduler.chain >= MAX_CHAIN {
            return Err(format!(
                "this call was made by a chain of {MAX_CHAIN} reminders, each scheduled by the \
                 call the one before made: it may not schedule another (a client's call starts \
                 a new chain)"
            ));
        }
        let now = Utc::now();
        let reminder = Reminder {
            id: format!("rem_{}", uuid::Uuid::new_v4().simple()),
            session_id: scheduler.session.id().to_string(),
            fire_at: fire_at(&when, now)?,
            action: self::action(&scheduler, action)?,
            scheduled_by: ScheduledBy {
                call_id: scheduler.call_id.clone(),
                tool: scheduler.tool.clone(),
                chain: scheduler.chain,
            },
            created_at: now,
        };
        let kept = scheduler
            .store
            .schedule_reminder(reminder)
            .await
            .map_err(|e| e.to_string())?;
        Ok(to_wit(&kept))
    }

    async fn list_reminders(&mut self) -> Result<Vec<wit::Reminder>, String> {
        let scheduler = self.grant()?;
        let pending = scheduler
            .store
            .pending_reminders(scheduler.session.id())
            .await
            .map_err(|e| e.to_string())?;
        Ok(pending.iter().map(to_wit).collect())
    }

    async fn cancel_reminder(&mut self, id: String) -> Result<bool, String> {
        let scheduler = self.writable()?;
        if id.len() > MAX_ID_BYTES {
            // No reminder has such an id.
            return Ok(false);
        }
        scheduler
            .store
            .cancel_reminder(scheduler.session.id(), &id)
            .await
            .map_err(|e| e.to_string())
    }
}

/// Link `toolhost:tool/reminders` into a linker whose store data holds a
/// [`RemindersCtx`].
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut RemindersCtx,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, wasmtime::component::HasSelf<RemindersCtx>>(linker, get)
}
