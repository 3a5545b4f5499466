//! Test guest: schedules, lists and cancels reminders as told and reports
//! each outcome, so tests can check the reminders capability's grant, read
//! calls, bounds and firing; with `note`, it only returns the note (the
//! call a reminder makes).

use std::time::Duration;

use toolhost_sdk::prelude::*;
use toolhost_sdk::reminders::{self, Action, Reminder, When};

/// What to try.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// The effect to declare for this call: `read` or `write` (default).
    #[serde(default)]
    effect: Option<String>,
    /// Just answer with this note (what a reminder's call does).
    #[serde(default)]
    note: Option<String>,
    /// `message`, `call`, `loop` (schedule `times` calls of itself with
    /// this same input: a loop of reminders), `list` or `cancel`.
    #[serde(default)]
    op: Option<String>,
    /// Fire at this instant.
    #[serde(default)]
    at: Option<String>,
    /// Fire after this many milliseconds.
    #[serde(default)]
    after_ms: Option<u64>,
    /// The message.
    #[serde(default)]
    message: Option<String>,
    /// The tool to call.
    #[serde(default)]
    tool: Option<String>,
    /// Its input.
    #[serde(default)]
    input: Option<Value>,
    /// The reminder to cancel.
    #[serde(default)]
    id: Option<String>,
    /// How many times to schedule.
    #[serde(default)]
    times: Option<u32>,
}

struct ReminderProbe;

fn reminder(r: &Reminder) -> Value {
    let action = match &r.action {
        Action::Message(message) => json!({ "message": message }),
        Action::Call { tool, input } => json!({ "tool": tool, "input": input }),
    };
    json!({
        "id": r.id,
        "session": r.session,
        "fireAt": r.fire_at,
        "action": action,
        "scheduledBy": r.scheduled_by,
    })
}

fn outcome<T>(result: Result<T, reminders::Error>, ok: impl FnOnce(T) -> Value) -> Value {
    match result {
        Ok(value) => json!({ "ok": true, "value": ok(value) }),
        Err(e) => json!({ "ok": false, "error": e.0 }),
    }
}

impl Tool for ReminderProbe {
    type Input = Input;
    const DESCRIPTION: &'static str =
        "Schedules, lists and cancels reminders as told; reports each outcome.";
    const EFFECT: EffectDecl = EffectDecl::ByInput;

    fn effect_for(input: &Input) -> Effect {
        match input.effect.as_deref() {
            Some("read") => Effect::Read,
            _ => Effect::Write,
        }
    }

    fn execute(input: Input, ctx: &CallContext) -> Result<Output, ToolError> {
        if let Some(note) = input.note {
            return Ok(json!({ "note": note, "callId": ctx.call_id }).into());
        }
        let when = || match (&input.at, input.after_ms) {
            (Some(at), _) => When::At(at.clone()),
            (None, ms) => When::After(Duration::from_millis(ms.unwrap_or(0))),
        };
        let result = match input.op.as_deref().unwrap_or("message") {
            "message" => {
                let text = input.message.clone().unwrap_or_default();
                let all: Vec<Value> = (0..input.times.unwrap_or(1))
                    .map(|_| outcome(reminders::message(when(), text.clone()), |r| reminder(&r)))
                    .collect();
                json!(all)
            }
            "call" => {
                let tool = input.tool.clone().unwrap_or_default();
                let args = input.input.clone().unwrap_or(json!({}));
                json!([outcome(reminders::call(when(), tool, &args), |r| reminder(
                    &r
                ))])
            }
            "loop" => {
                let again = json!({
                    "op": "loop",
                    "times": input.times,
                    "after_ms": input.after_ms,
                });
                let all: Vec<Value> = (0..input.times.unwrap_or(1))
                    .map(|_| {
                        outcome(reminders::call(when(), "reminder_probe", &again), |r| {
                            reminder(&r)
                        })
                    })
                    .collect();
                json!(all)
            }
            "list" => outcome(reminders::list(), |all| {
                json!(all.iter().map(reminder).collect::<Vec<_>>())
            }),
            "cancel" => outcome(reminders::cancel(input.id.as_deref().unwrap_or("")), |c| {
                json!(c)
            }),
            other => return Err(ToolError::InvalidInput(format!("unknown op {other:?}"))),
        };
        Ok(json!({ "result": result }).into())
    }
}

export_tool!(ReminderProbe);
