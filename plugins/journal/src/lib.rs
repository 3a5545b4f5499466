//! `journal`: a journal kept in the host's state root (`/state`), shared by
//! every session. A call with an `entry` appends it, with the session's id;
//! a call without one reads the latest entries; `export` saves the journal
//! as an artifact of the session; `notify` also sends the entry to a
//! session on the `journal` channel; `later_ms` appends it later, through a
//! reminder that calls this tool. Needs `state = "write"` (and `artifacts =
//! "write"` to export, `metrics = true` to count entries, `sessions =
//! ["journal"]` to notify, `reminders = { tools = ["journal"] }` for
//! `later_ms`) in the tool's grant (a read call gets `/state` read-only
//! whatever it is granted).

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use toolhost_sdk::prelude::*;
use toolhost_sdk::reminders::When;
use toolhost_sdk::sessions::SendOptions;
use toolhost_sdk::{artifacts, log, metrics, reminders};

/// What to add, if anything.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// A line to append; without one the call only reads.
    #[serde(default)]
    #[schemars(length(min = 1, max = 1000))]
    entry: Option<String>,
    /// Save the journal as the session's artifact `journal.txt`.
    #[serde(default)]
    export: bool,
    /// Also send the entry to the session with this key on the `journal`
    /// channel (started if there is none), as a `user.message` event.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128))]
    notify: Option<String>,
    /// Append the entry later instead: a reminder calls this tool with it
    /// after this many milliseconds (in a session the server keeps).
    #[serde(default)]
    #[schemars(range(max = 86_400_000))]
    later_ms: Option<u64>,
}

/// The most entries a call returns: the latest ones.
const LATEST: usize = 20;

struct Journal;

impl Tool for Journal {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Append an entry to the host's journal, or read its latest entries
        (without `entry`). The journal is shared by every session; each
        entry records the session that wrote it. With `export`, the journal
        is also saved as the session's artifact `journal.txt`. With
        `notify`, the entry is also sent to that session of the `journal`
        channel. With `later_ms`, the entry is appended that much later (by
        a reminder) instead of now.
    ";
    const EFFECT: EffectDecl = EffectDecl::ByInput;

    fn effect_for(input: &Input) -> Effect {
        match input.entry.is_some() || input.export || input.notify.is_some() {
            true => Effect::Write,
            false => Effect::Read,
        }
    }

    fn execute(input: Input, ctx: &CallContext) -> Result<Output, ToolError> {
        if input.entry.is_none() {
            let needs_entry = [
                ("notify", input.notify.is_some()),
                ("later_ms", input.later_ms.is_some()),
            ];
            if let Some((key, _)) = needs_entry.iter().find(|(_, given)| *given) {
                return Err(ToolError::InvalidInput(format!(
                    "`{key}` is about the entry: give an `entry` too"
                )));
            }
        }
        if let (Some(delay), Some(entry)) = (input.later_ms, &input.entry) {
            let mut now = json!({ "entry": entry });
            if let Some(key) = &input.notify {
                now["notify"] = json!(key);
            }
            let later = When::After(Duration::from_millis(delay));
            let reminder = reminders::call(later, "journal", &now)?;
            return Ok(
                json!({ "reminder": { "id": reminder.id, "fireAt": reminder.fire_at } }).into(),
            );
        }
        let root = ctx.state_root.as_deref().ok_or_else(|| {
            ToolError::Failed("no state root: grant this tool `state = \"write\"`".into())
        })?;
        let path = Path::new(root).join("journal.txt");
        if let Some(entry) = &input.entry {
            let started = Instant::now();
            let line = format!("{}\t{}\n", ctx.session.id, entry.replace(['\n', '\t'], " "));
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut file| file.write_all(line.as_bytes()))
                .map_err(|e| {
                    ToolError::Failed(format!("cannot append to {}: {e}", path.display()))
                })?;
            count_entry(ctx, started.elapsed().as_secs_f64());
        }
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                return Err(ToolError::Failed(format!(
                    "cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        let lines: Vec<&str> = text.lines().collect();
        let latest: Vec<Value> = lines[lines.len().saturating_sub(LATEST)..]
            .iter()
            .map(|line| {
                let (session, text) = line.split_once('\t').unwrap_or(("", line));
                json!({ "session": session, "text": text })
            })
            .collect();
        let artifact = match input.export {
            true => Some(
                artifacts::save_file(
                    "journal.txt",
                    &path.to_string_lossy(),
                    "text/plain",
                    &["journal"],
                )?
                .uri,
            ),
            false => None,
        };
        let notified = match (&input.notify, &input.entry) {
            (Some(key), Some(entry)) => {
                let sent = ctx.send("journal", entry, &SendOptions::key(key.as_str()))?;
                Some(json!({
                    "sessionId": sent.session.id,
                    "continuationToken": sent.session.continuation_token,
                    "started": sent.started,
                    "eventId": sent.event_id,
                }))
            }
            _ => None,
        };
        Ok(json!({
            "stateRoot": root,
            "workspaceDir": ctx.workspace_dir,
            "count": lines.len(),
            "latest": latest,
            "artifact": artifact,
            "notified": notified,
        })
        .into())
    }
}

/// Count an entry by the session's channel, and how long its append took
/// (`metrics = true`); the entry stands without them.
fn count_entry(ctx: &CallContext, seconds: f64) {
    let channel = ctx.session.channel.as_deref().unwrap_or("none");
    let counted = metrics::counter("journal_entries")
        .add(1.0, &[("channel", channel)])
        .and_then(|()| metrics::histogram("journal_append_seconds").record(seconds, &[]));
    if let Err(refused) = counted {
        log::warn(format!("cannot count the entry: {refused}"));
    }
}

export_tool!(Journal);
