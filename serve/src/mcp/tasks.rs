//! The Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) for MCP
//! 2026-07-28 clients that declare it: a call the client need not wait on.
//!
//! A call to a tool whose `[tools.<name>] task` is `required` is a task
//! from its start; one that is `optional` runs in its request and becomes
//! a task when it runs past `[server] task_after_ms` or asks a question it
//! did not name (an `elicit`, a `sample`, an approval). Named questions
//! (`ask-all`) asked before that are the request's input-required rounds.
//! The request answers `CreateTaskResult` once the task is recorded; the
//! client polls `tasks/get` (the result or error inlined once it ends),
//! answers the task's questions with `tasks/update` and stops it with
//! `tasks/cancel`. A tool that ran and reported an error is `completed`
//! with `isError`; one that trapped or hit a limit, or whose client could
//! not be asked, is `failed`.
//!
//! Tasks belong to the caller that made them (another gets `-32602`, as
//! for a task that never was), run in this server process (a fleet's other
//! servers answer for them from Redis: [`super::fleet_tasks`]), and are
//! kept `[server] task_ttl_ms` from their start; at most `[server]
//! max_tasks` at once, finished ones making room for new ones first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolResponse, CreateTaskResult, DetailedTask, ErrorData, GetTaskResult, InputResponses,
    JsonObject, Task, TaskPayload, TaskStatus,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use toolhost::config::TaskSupport;

use super::events::{Event, Reply, Round};
use super::fleet_tasks::{FleetTasks, Message};

/// How often a client should poll a task, in milliseconds.
const POLL_INTERVAL_MS: u64 = 250;

/// What the request that may make a task knows: where tasks live, what the
/// tool allows, how long a call runs first, and whose the task is.
#[derive(Clone)]
pub struct Plan {
    /// The server's tasks.
    pub tasks: Arc<Tasks>,
    /// Whether the tool's calls may, or must, be tasks.
    pub support: TaskSupport,
    /// How long a call runs in its request before it becomes a task.
    pub after: Duration,
    /// The caller the task belongs to.
    pub owner: String,
}

/// The tasks of one server.
pub struct Tasks {
    tasks: Mutex<HashMap<String, Arc<Entry>>>,
    /// The fleet's store, where every server reads them, with a Redis
    /// backend.
    fleet: Option<Arc<FleetTasks>>,
    max: usize,
    ttl: Duration,
    /// How many bytes of results and errors the finished tasks may hold
    /// together.
    max_bytes: usize,
}

/// One task.
struct Entry {
    owner: String,
    created_at: String,
    expires: Instant,
    state: Mutex<State>,
    /// Told of every change, for the fleet's copy.
    changed: tokio::sync::watch::Sender<()>,
    /// The call's task, stopped by `tasks/cancel`.
    call: Mutex<Option<AbortHandle>>,
}

/// Where a task is.
struct State {
    updated_at: String,
    now: Now,
    /// The bytes of its result or error, once it ended.
    bytes: usize,
}

/// A task's status and what goes with it.
enum Now {
    Working,
    /// Its call waits for these answers.
    InputRequired(Round),
    Completed(JsonObject),
    Failed(JsonObject),
    Cancelled,
}

impl Now {
    fn is_over(&self) -> bool {
        matches!(self, Self::Completed(_) | Self::Failed(_) | Self::Cancelled)
    }
}

/// A place for one task, taken before its call moves into it.
pub struct Reservation {
    id: String,
    entry: Arc<Entry>,
}

fn timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn unknown(task_id: &str) -> ErrorData {
    let shown: String = task_id.chars().take(64).collect();
    ErrorData::invalid_params(
        format!("no task {shown:?} (it never was, it expired, or it is another client's)"),
        Some(json!({ "code": "task_not_found" })),
    )
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

impl Tasks {
    /// Tasks of a server: at most `max` at once, each kept `ttl`, their
    /// results and errors together at most `max_bytes`.
    pub fn new(max: usize, ttl: Duration, max_bytes: usize) -> Self {
        Self {
            tasks: Mutex::default(),
            fleet: None,
            max,
            ttl,
            max_bytes,
        }
    }

    /// The same tasks, copied into the fleet's store so that every server
    /// of the fleet answers for them.
    pub fn shared(mut self, fleet: Arc<FleetTasks>) -> Self {
        self.fleet = Some(fleet);
        self
    }

    /// Make room for `bytes` of a result or error that `id` ended with:
    /// the oldest finished tasks are forgotten until it fits. Whether it
    /// does (one result bigger than the whole allowance never does).
    fn hold(&self, id: &str, bytes: usize) -> bool {
        if bytes > self.max_bytes {
            return false;
        }
        let mut tasks = self.lock();
        let mut held: usize = tasks
            .iter()
            .filter(|(other, _)| other.as_str() != id)
            .map(|(_, entry)| entry.state().bytes)
            .sum();
        while held + bytes > self.max_bytes {
            let oldest = tasks
                .iter()
                .filter(|(other, entry)| other.as_str() != id && entry.state().bytes > 0)
                .min_by_key(|(_, entry)| entry.expires)
                .map(|(other, entry)| (other.clone(), entry.state().bytes));
            let Some((oldest, freed)) = oldest else {
                return false;
            };
            tasks.remove(&oldest);
            held -= freed;
        }
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Entry>>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for a task of `owner`, or none when every place holds a
    /// running task (expired and finished ones give theirs up first).
    pub fn reserve(&self, owner: &str) -> Option<Reservation> {
        let mut tasks = self.lock();
        let now = Instant::now();
        tasks.retain(|_, entry| entry.expires > now);
        if tasks.len() >= self.max {
            let finished = tasks
                .iter()
                .filter(|(_, entry)| entry.state().now.is_over())
                .min_by_key(|(_, entry)| entry.expires)
                .map(|(id, _)| id.clone());
            tasks.remove(&finished?);
        }
        let id = uuid::Uuid::new_v4().to_string();
        let created_at = timestamp();
        let entry = Arc::new(Entry {
            owner: owner.to_string(),
            created_at: created_at.clone(),
            expires: now + self.ttl,
            state: Mutex::new(State {
                updated_at: created_at,
                now: Now::Working,
                bytes: 0,
            }),
            call: Mutex::default(),
            changed: tokio::sync::watch::Sender::new(()),
        });
        tasks.insert(id.clone(), entry.clone());
        Some(Reservation { id, entry })
    }

    /// Move a call into its reserved place: `call` stops it, `events` is
    /// what it tells, and `asked` the round it waits on already. The
    /// request is answered with the task, which is recorded already (in the
    /// fleet's store too, when there is one).
    pub async fn adopt(
        self: &Arc<Self>,
        reservation: Reservation,
        call: Option<AbortHandle>,
        events: Arc<tokio::sync::Mutex<mpsc::Receiver<Event>>>,
        asked: Option<Round>,
    ) -> CallToolResponse {
        let Reservation { id, entry } = reservation;
        *entry.call.lock().unwrap_or_else(PoisonError::into_inner) = call;
        if let Some(round) = asked {
            entry.set(Now::InputRequired(round));
        }
        let created = CreateTaskResult::new(self.task(&id, &entry));
        if let Some(fleet) = &self.fleet {
            let lease = fleet.hold(&id).await.unwrap_or_else(|e| {
                tracing::warn!(task = %id, "an MCP task is not held in the fleet's store: {e}");
                None
            });
            self.copy(fleet, &id, &entry).await;
            let mirrored = (self.clone(), fleet.clone(), id.clone(), entry.clone());
            tokio::spawn(mirror(mirrored, lease));
        }
        tokio::spawn(follow(self.clone(), id, entry, events));
        CallToolResponse::Task(created)
    }

    /// Write task `id` as it is now into the fleet's store: whether what
    /// was written had ended (or the task is gone here).
    async fn copy(&self, fleet: &FleetTasks, id: &str, entry: &Entry) -> bool {
        let Ok(task) = self.get_here(id, &entry.owner) else {
            return true;
        };
        let left = entry.expires.saturating_duration_since(Instant::now());
        if let Err(e) = fleet.write(id, &entry.owner, &task, left).await {
            tracing::warn!(task = %id, "an MCP task's change is not in the fleet's store: {e}");
        }
        task.task.status().is_terminal()
    }

    fn task(&self, id: &str, entry: &Entry) -> Task {
        let state = entry.state();
        let status = match &state.now {
            Now::Working => TaskStatus::Working,
            Now::InputRequired(_) => TaskStatus::InputRequired,
            Now::Completed(_) => TaskStatus::Completed,
            Now::Failed(_) => TaskStatus::Failed,
            Now::Cancelled => TaskStatus::Cancelled,
        };
        Task::new(
            id,
            status,
            entry.created_at.clone(),
            state.updated_at.clone(),
        )
        .with_ttl_ms(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX))
        .with_poll_interval_ms(POLL_INTERVAL_MS)
    }

    fn find(&self, task_id: &str, owner: &str) -> Result<Arc<Entry>, ErrorData> {
        let entry = self.lock().get(task_id).cloned();
        entry
            .filter(|entry| entry.owner == owner && entry.expires > Instant::now())
            .ok_or_else(|| unknown(task_id))
    }

    /// `tasks/get`: where the task is, its result or error once it ended,
    /// the questions it waits on while it does; a task another server of
    /// the fleet runs, from the fleet's store.
    pub async fn get(&self, task_id: &str, owner: &str) -> Result<GetTaskResult, ErrorData> {
        match (self.get_here(task_id, owner), &self.fleet) {
            (Err(unknown_here), Some(fleet)) => {
                fleet.read(task_id, owner).await?.ok_or(unknown_here)
            }
            (here, _) => here,
        }
    }

    /// `tasks/update`: answers to the questions the task waits on; once
    /// every one is answered the call goes on. Answers to questions it did
    /// not ask, or of the wrong shape, are left out. For a task another
    /// server runs, they are sent there.
    pub async fn update(
        &self,
        task_id: &str,
        owner: &str,
        responses: InputResponses,
    ) -> Result<(), ErrorData> {
        if self.find(task_id, owner).is_ok() {
            return self.update_here(task_id, owner, responses);
        }
        let message = Message::Update {
            owner: owner.to_string(),
            responses,
        };
        self.send(task_id, owner, message).await
    }

    /// `tasks/cancel`: stop the call; a task that ended stays as it ended.
    /// For a task another server runs, the cancel is sent there.
    pub async fn cancel(&self, task_id: &str, owner: &str) -> Result<(), ErrorData> {
        if self.find(task_id, owner).is_ok() {
            return self.cancel_here(task_id, owner);
        }
        let message = Message::Cancel {
            owner: owner.to_string(),
        };
        self.send(task_id, owner, message).await
    }

    /// Send `message` to task `task_id`, run by another server.
    async fn send(&self, task_id: &str, owner: &str, message: Message) -> Result<(), ErrorData> {
        let Some(fleet) = &self.fleet else {
            return Err(unknown(task_id));
        };
        match fleet.send(task_id, owner, &message).await? {
            true => Ok(()),
            false => Err(unknown(task_id)),
        }
    }

    fn get_here(&self, task_id: &str, owner: &str) -> Result<GetTaskResult, ErrorData> {
        let entry = self.find(task_id, owner)?;
        let task = self.task(task_id, &entry);
        let payload = match &entry.state().now {
            Now::Working => TaskPayload::Working,
            Now::InputRequired(round) => TaskPayload::InputRequired {
                input_requests: round.open(),
            },
            Now::Completed(result) => TaskPayload::Completed {
                result: result.clone(),
            },
            Now::Failed(error) => TaskPayload::Failed {
                error: error.clone(),
            },
            Now::Cancelled => TaskPayload::Cancelled,
        };
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }

    fn update_here(
        &self,
        task_id: &str,
        owner: &str,
        responses: InputResponses,
    ) -> Result<(), ErrorData> {
        let entry = self.find(task_id, owner)?;
        {
            let mut state = entry.state();
            let answered = match &mut state.now {
                Now::InputRequired(round) => round.take(responses),
                _ => false,
            };
            if answered
                && let Now::InputRequired(round) = std::mem::replace(&mut state.now, Now::Working)
            {
                round.finish();
                state.updated_at = timestamp();
            }
        }
        entry.changed.send_replace(());
        Ok(())
    }

    fn cancel_here(&self, task_id: &str, owner: &str) -> Result<(), ErrorData> {
        let entry = self.find(task_id, owner)?;
        if entry.set(Now::Cancelled) {
            entry.stop();
        }
        Ok(())
    }
}

impl Entry {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stop the task's call where it is.
    fn stop(&self) {
        let call = self
            .call
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(call) = call {
            call.abort();
        }
    }

    /// Move to `now` unless the task ended already; whether it moved.
    fn set(&self, now: Now) -> bool {
        {
            let mut state = self.state();
            if state.now.is_over() {
                return false;
            }
            state.now = now;
            state.updated_at = timestamp();
        }
        self.changed.send_replace(());
        true
    }
}

/// Keep the fleet's copy of a task this server runs up to date, and apply
/// what other servers sent it, until it ends; then give `lease` up.
async fn mirror(
    (tasks, fleet, id, entry): (Arc<Tasks>, Arc<FleetTasks>, String, Arc<Entry>),
    lease: Option<toolhost::redis_store::lease::Lease>,
) {
    let mut changed = entry.changed.subscribe();
    let mut woken = fleet.watch(&id);
    let mut reread = tokio::time::interval(fleet.reread());
    loop {
        tokio::select! {
            _ = changed.changed() => {}
            _ = woken.recv() => {}
            _ = reread.tick() => {}
        }
        for message in fleet.take(&id).await {
            // Sent by a server that checked whose the task is.
            let _ = match message {
                Message::Update { owner, responses } => tasks.update_here(&id, &owner, responses),
                Message::Cancel { owner } => tasks.cancel_here(&id, &owner),
            };
        }
        changed.mark_unchanged();
        // Done once what was written had ended.
        if tasks.copy(&fleet, &id, &entry).await {
            break;
        }
    }
    if let Some(lease) = lease {
        lease.release().await;
    }
}

/// Follow what task `id`'s call tells until it ends; what it ends with is
/// kept within the tasks' allowance of bytes.
async fn follow(
    tasks: Arc<Tasks>,
    id: String,
    entry: Arc<Entry>,
    events: Arc<tokio::sync::Mutex<mpsc::Receiver<Event>>>,
) {
    let mut events = events.lock().await;
    loop {
        let now = match events.recv().await {
            Some(Event::Asked(round)) => Now::InputRequired(round),
            Some(Event::Missing(required)) => {
                entry.stop();
                let error = ErrorData::missing_required_client_capability(required);
                Now::Failed(object(json!(error)))
            }
            Some(Event::Finished(Ok(Reply::Call { response, failure }))) => match failure {
                Some(failure) => Now::Failed(object(json!(ErrorData::internal_error(
                    failure,
                    Some(json!({ "code": "tool_failed" })),
                )))),
                None => match response {
                    CallToolResponse::Complete(result) => Now::Completed(object(json!(result))),
                    _ => Now::Failed(object(json!(ErrorData::internal_error(
                        "the call ended without a result",
                        None,
                    )))),
                },
            },
            Some(Event::Finished(Ok(Reply::Prompt(_)))) => Now::Failed(object(json!(
                ErrorData::internal_error("a prompt answered a task", None)
            ))),
            Some(Event::Finished(Err(error))) => Now::Failed(object(json!(error))),
            None => Now::Failed(object(json!(ErrorData::internal_error(
                "the call ended without a result",
                None,
            )))),
        };
        if !now.is_over() {
            entry.set(now);
            continue;
        }
        let bytes = match &now {
            Now::Completed(kept) | Now::Failed(kept) => json!(kept).to_string().len(),
            _ => 0,
        };
        let (now, bytes) = match tasks.hold(&id, bytes) {
            true => (now, bytes),
            false => (
                Now::Failed(object(json!(ErrorData::internal_error(
                    format!(
                        "the task ended with {bytes} bytes, more than this server keeps for tasks \
                     (`[server] task_results_mb` = {} MiB)",
                        tasks.max_bytes / (1024 * 1024)
                    ),
                    Some(json!({ "code": "task_result_too_large" })),
                )))),
                0,
            ),
        };
        if entry.set(now) {
            entry.state().bytes = bytes;
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A task of `owner` whose call never ends.
    async fn running(tasks: &Arc<Tasks>, owner: &str) -> String {
        let reservation = tasks.reserve(owner).expect("a place");
        let call = tokio::spawn(std::future::pending::<()>()).abort_handle();
        let (_events, received) = mpsc::channel(4);
        let events = Arc::new(tokio::sync::Mutex::new(received));
        match tasks.adopt(reservation, Some(call), events, None).await {
            CallToolResponse::Task(created) => created.task.task_id,
            _ => panic!("not a task"),
        }
    }

    #[tokio::test]
    async fn another_callers_task_is_one_that_never_was() {
        let tasks = Arc::new(Tasks::new(4, Duration::from_secs(60), 1 << 20));
        let id = running(&tasks, "\"alice\"").await;
        assert!(tasks.get(&id, "\"alice\"").await.is_ok());
        for (what, refused) in [
            ("get", tasks.get(&id, "\"bob\"").await.err()),
            (
                "update",
                tasks
                    .update(&id, "\"bob\"", InputResponses::new())
                    .await
                    .err(),
            ),
            ("cancel", tasks.cancel(&id, "\"bob\"").await.err()),
        ] {
            let refused = refused.unwrap_or_else(|| panic!("{what} was allowed"));
            assert_eq!(refused.code.0, -32602, "{what}");
        }
        // Bob's cancel did not touch it.
        let got = tasks.get(&id, "\"alice\"").await.unwrap();
        assert_eq!(got.task.status(), TaskStatus::Working);
    }

    #[tokio::test]
    async fn ids_that_never_were_are_refused_whatever_their_characters() {
        let tasks = Arc::new(Tasks::new(4, Duration::from_secs(60), 1 << 20));
        // A cut at a byte count would split a three-byte character.
        for id in ["", "x", &"€".repeat(100), &"x".repeat(1 << 20)] {
            let refused = tasks.get(id, "").await.unwrap_err();
            assert_eq!(refused.code.0, -32602);
            assert!(refused.message.len() < 512, "{}", refused.message.len());
            assert!(tasks.cancel(id, "").await.is_err());
            assert!(tasks.update(id, "", InputResponses::new()).await.is_err());
        }
    }

    #[tokio::test]
    async fn running_tasks_are_never_evicted_to_make_room() {
        let tasks = Arc::new(Tasks::new(2, Duration::from_secs(60), 1 << 20));
        let first = running(&tasks, "").await;
        running(&tasks, "").await;
        assert!(tasks.reserve("").is_none());
        tasks.cancel(&first, "").await.unwrap();
        assert!(
            tasks.reserve("").is_some(),
            "a cancelled task gives its place up"
        );
    }

    /// Mark `id` ended with `bytes` of result.
    fn ended(tasks: &Tasks, id: &str, bytes: usize) {
        let entry = tasks.lock().get(id).cloned().unwrap();
        entry.set(Now::Completed(JsonObject::new()));
        entry.state().bytes = bytes;
    }

    #[tokio::test]
    async fn results_past_the_allowance_push_the_oldest_out_or_do_not_fit() {
        let tasks = Arc::new(Tasks::new(8, Duration::from_secs(60), 1000));
        let old = running(&tasks, "").await;
        ended(&tasks, &old, 600);
        let new = running(&tasks, "").await;
        assert!(tasks.hold(&new, 600), "the oldest result makes room");
        assert!(tasks.get(&old, "").await.is_err(), "and is forgotten");
        ended(&tasks, &new, 600);
        let big = running(&tasks, "").await;
        assert!(
            !tasks.hold(&big, 1001),
            "more than the whole allowance never fits"
        );
        assert!(tasks.get(&new, "").await.is_ok(), "and pushes nothing out");
    }
}
