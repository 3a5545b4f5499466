//! The sessions a server hands out: created on request, found by id or
//! continuation token, persisted under the state directory, and forgotten
//! (workspace and all) once idle for the retention period.

mod backend;
mod bind;
mod create;
mod fleet;
mod local;
mod reminders;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde_json::Value;

use self::backend::SessionBackend;
use self::bind::Lookup;
use self::local::LocalSessions;
use super::fleet_sessions::FleetSessions;
use super::record::Record;
use super::reminder_store::{LocalReminders, ReminderStore};
use super::reminders::{Reminder, ReminderBook, ReminderError};
use super::{
    AgentPin, Dirs, HistoryBudget, Session, SessionMode, SessionSpec, WORKSPACE_DIR, parse_instant,
};
use crate::redis_store::RedisStore;
use crate::redis_store::lease::LeaseTerms;

/// The file a session's record is kept in, inside its directory.
const RECORD_FILE: &str = "session.json";

/// The name an ended session's folder takes before it is removed; one left
/// by a crash is removed when the store opens.
const ENDED_PREFIX: &str = ".ended-";

/// Remove the folder `dir` and all in it, reporting any failure but one
/// saying it is already gone.
fn remove_quietly(dir: &Path) {
    if let Err(e) = std::fs::remove_dir_all(dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("cannot remove session {}: {e}", dir.display());
    }
}

/// What a client asks for when it creates a session.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    /// The channel the session serves (`slack`, `github`, ...).
    pub channel: Option<String>,
    /// The key within the channel; a fresh one when a channel is given without it.
    pub key: Option<String>,
    /// Live or dry-run.
    pub mode: SessionMode,
    /// The instant time arguments are bounded by, as given.
    pub as_of: Option<chrono::DateTime<chrono::FixedOffset>>,
    /// The owner (kept as its principal only).
    pub auth: Option<Value>,
    /// What its calls present to upstream MCP servers, held in memory only.
    pub credentials: Option<super::Credentials>,
    /// The agent version its calls run; the store's [`PinSource`] gives
    /// one when absent.
    pub pin: Option<AgentPin>,
}

/// What a session the store creates without a pin is bound to: the
/// latest version of the host's agent (see `Host::attach_sessions`).
pub type PinSource = Arc<dyn Fn() -> Option<AgentPin> + Send + Sync>;

/// A request bound to a session.
#[derive(Debug, Clone)]
pub struct Bound {
    /// The session the call runs in.
    pub session: Arc<Session>,
    /// Whether it is a scratch session made for this one call.
    pub scratch: bool,
}

/// Why a request could not be bound to a session.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The token is malformed, or came together with a session id.
    #[error("invalid continuation token: {reason}")]
    InvalidToken {
        /// What was wrong.
        reason: String,
    },
    /// No session has this id.
    #[error("session `{id}` not found")]
    SessionNotFound {
        /// The id asked for.
        id: String,
    },
    /// The session belongs to another principal.
    #[error("session `{session}` belongs to another principal")]
    NotOwner {
        /// The session id.
        session: String,
    },
    /// The shared store did not answer.
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
}

impl BindError {
    /// The stable code surfaces report.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidToken { .. } => "invalid_continuation_token",
            Self::SessionNotFound { .. } => "session_not_found",
            Self::NotOwner { .. } => "session_forbidden",
            Self::Unavailable(_) => "state_unavailable",
        }
    }
}

/// A session as [`SessionStore::list`] gives it.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The session.
    pub session: Arc<Session>,
    /// Whether a write call (on any server of a fleet) holds its slot.
    pub busy: bool,
}

/// Why a session could not be created.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The channel or key cannot form a continuation token.
    #[error("invalid session: {0}")]
    Invalid(String),
    /// A session with this continuation token exists already.
    #[error("a session with continuation token `{token}` exists already: `{session}`")]
    TokenTaken {
        /// The token.
        token: String,
        /// The session holding it.
        session: String,
    },
    /// The store holds as many sessions as it may.
    #[error(
        "the server keeps {max} sessions already, the most it keeps; end or reuse one \
         (idle sessions expire after session_retention_secs)"
    )]
    Full {
        /// How many it keeps.
        max: usize,
    },
    /// The session's directory or record could not be written.
    #[error("cannot store the session: {0:#}")]
    Io(#[from] anyhow::Error),
    /// The shared store did not answer.
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
}

/// Why a session could not be ended.
#[derive(Debug, thiserror::Error)]
pub enum RemoveError {
    /// No session has this id.
    #[error("session `{id}` not found")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// A write call runs in it.
    #[error("session `{id}` is running a write call; end it once the call is done")]
    Busy {
        /// The session id.
        id: String,
    },
    /// The shared store did not answer.
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
}

/// The Redis server keeping a fleet's sessions did not answer: what it
/// said, naming it. Retry once `/healthz` reports it reachable.
#[derive(Debug, thiserror::Error)]
#[error("the sessions are kept in {0}")]
pub struct Unavailable(pub String);

/// The most sessions one store keeps (idle ones expire on their own).
pub const MAX_SESSIONS: usize = 10_000;

#[derive(Default)]
struct Index {
    by_id: HashMap<String, Arc<Session>>,
    by_token: HashMap<String, String>,
}

impl Index {
    /// Take the sessions `ids` (and their tokens) out of the index.
    fn take(&mut self, ids: &[String]) -> Vec<Arc<Session>> {
        let taken: Vec<Arc<Session>> = ids.iter().filter_map(|id| self.by_id.remove(id)).collect();
        for token in taken.iter().filter_map(|s| s.continuation_token()) {
            self.by_token.remove(&token);
        }
        taken
    }
}

/// The sessions of one server, or of a fleet sharing them through Redis.
pub struct SessionStore {
    root: PathBuf,
    retention: Duration,
    max_sessions: usize,
    /// What its sessions' histories may hold, each and together.
    history: HistoryBudget,
    /// This server's sessions; with `shared`, the ones it has seen lately
    /// (Redis keeps the records, and is asked at every bind).
    index: RwLock<Index>,
    /// Held by a session being made here from its token check to its
    /// insert: two makers cannot both take one token, and lookups, which
    /// take only `index`, never wait on the record's fsync.
    creating: tokio::sync::Mutex<()>,
    /// The reminders pending in its sessions, as this server knows them
    /// (all of them on one machine), and what wakes the firing loop.
    reminders: Arc<ReminderBook>,
    /// Where the reminders are kept: `reminders` on one machine, Redis for
    /// a fleet.
    reminder_store: Arc<dyn ReminderStore>,
    /// What sessions created without a pin are bound to.
    pin_source: RwLock<Option<PinSource>>,
    /// Where the sessions are recorded: this machine's disk, or the
    /// fleet's Redis.
    backend: Arc<dyn SessionBackend>,
    /// Whether the reminders' store failed the last time it was asked (an
    /// outage is logged once, not every second).
    reminders_failing: AtomicBool,
}

impl std::fmt::Debug for SessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionStore")
            .field("root", &self.root)
            .field("retention", &self.retention)
            .field("fleet", &self.backend.is_fleet())
            .finish_non_exhaustive()
    }
}

impl SessionStore {
    /// Open the store kept under `root`, loading the sessions recorded there.
    /// A record that cannot be read is reported and left in place.
    pub fn open(root: impl Into<PathBuf>, retention: Duration) -> anyhow::Result<Self> {
        Self::open_with_history(root, retention, HistoryBudget::default())
    }

    /// [`SessionStore::open`], its sessions' histories held to `history`.
    pub fn open_with_history(
        root: impl Into<PathBuf>,
        retention: Duration,
        history: HistoryBudget,
    ) -> anyhow::Result<Self> {
        let store = Self::empty(root.into(), retention, history)?;
        for dir in store.session_dirs()? {
            if !dir.join(RECORD_FILE).is_file() {
                continue;
            }
            match store.load(&dir) {
                Ok(session) => {
                    store.reminders.load(&dir, session.id());
                    store.insert(Arc::new(session));
                }
                Err(e) => tracing::warn!("skipping session in {}: {e:#}", dir.display()),
            }
        }
        Ok(store)
    }

    /// The sessions of a fleet: records, tokens, write slots (leased on
    /// `terms`), events and reminders in `redis`, workspaces under `root`,
    /// a folder every server mounts.
    pub fn open_fleet(
        root: impl Into<PathBuf>,
        retention: Duration,
        history: HistoryBudget,
        redis: Arc<RedisStore>,
        terms: LeaseTerms,
    ) -> anyhow::Result<Self> {
        let mut store = Self::empty(root.into(), retention, history)?;
        let fleet = FleetSessions::new(redis, terms, &store.history);
        store.reminder_store = Arc::new(fleet.reminders().clone());
        store.backend = Arc::new(fleet);
        Ok(store)
    }

    /// A store over `root` holding no session yet; the folders of ended
    /// sessions a crash left half-removed there are removed.
    fn empty(root: PathBuf, retention: Duration, history: HistoryBudget) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&root)
            .with_context(|| format!("cannot create the sessions folder {}", root.display()))?;
        for entry in std::fs::read_dir(&root)
            .with_context(|| format!("cannot read the sessions folder {}", root.display()))?
            .flatten()
        {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(ENDED_PREFIX)
            {
                remove_quietly(&entry.path());
            }
        }
        let reminders = Arc::new(ReminderBook::new(root.clone()));
        Ok(Self {
            reminder_store: Arc::new(LocalReminders(reminders.clone())),
            reminders,
            root,
            retention,
            max_sessions: MAX_SESSIONS,
            history,
            index: RwLock::default(),
            creating: tokio::sync::Mutex::const_new(()),
            pin_source: RwLock::default(),
            backend: Arc::new(LocalSessions),
            reminders_failing: AtomicBool::new(false),
        })
    }

    fn session_dirs(&self) -> anyhow::Result<Vec<PathBuf>> {
        let entries = std::fs::read_dir(&self.root)
            .with_context(|| format!("cannot read the sessions folder {}", self.root.display()))?;
        Ok(entries.flatten().map(|entry| entry.path()).collect())
    }

    fn load(&self, dir: &Path) -> anyhow::Result<Session> {
        let text = std::fs::read_to_string(dir.join(RECORD_FILE))?;
        let record: Record = serde_json::from_str(&text)?;
        // The sweeper removes `root/<id>`: an id that is not this folder's
        // own name would point it at another folder.
        let folder = dir.file_name().and_then(|name| name.to_str());
        anyhow::ensure!(
            folder == Some(record.id.as_str()),
            "its record names the session {:?}, not its folder's name {:?}",
            record.id,
            folder.unwrap_or_default()
        );
        self.session_from(record)
    }

    /// The session a record describes, its directory under the root.
    fn session_from(&self, record: Record) -> anyhow::Result<Session> {
        let as_of = record
            .as_of
            .as_deref()
            .map(parse_instant)
            .transpose()
            .map_err(|e| anyhow::anyhow!("asOf {e}"))?;
        let dir = self.root.join(&record.id);
        let spec = SessionSpec {
            id: Some(record.id),
            channel: record.channel,
            key: record.key,
            mode: record.mode,
            as_of,
            auth: record.auth,
            credentials: None,
            workspace: None,
            artifacts: None,
            pin: record.agent,
        };
        Ok(Session::with_dirs(
            spec,
            Dirs::under(&dir),
            record.created_at,
            self.history.clone(),
        ))
    }

    /// Add `session` to the index; a session already indexed under its id
    /// is kept (and returned) instead.
    fn insert(&self, session: Arc<Session>) -> Arc<Session> {
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(kept) = index.by_id.get(session.id()) {
            return kept.clone();
        }
        if let Some(token) = session.continuation_token() {
            index.by_token.insert(token, session.id().to_string());
        }
        index
            .by_id
            .insert(session.id().to_string(), session.clone());
        session
    }

    /// The reminders pending in the store's sessions.
    pub fn reminders(&self) -> &ReminderBook {
        &self.reminders
    }

    /// Whether the sessions are shared with other servers through Redis.
    pub fn is_fleet(&self) -> bool {
        self.backend.is_fleet()
    }

    /// Whether `session` is one of the store's (not a scratch session made
    /// for one call).
    pub fn holds(&self, session: &Arc<Session>) -> bool {
        self.get(session.id())
            .is_some_and(|kept| Arc::ptr_eq(&kept, session))
    }

    /// Bind every session created from now on without a pin to what
    /// `source` returns then.
    pub fn set_pin_source(&self, source: PinSource) {
        *self
            .pin_source
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(source);
    }

    /// Bind `session` to `pin` from its next call on, and record it.
    pub async fn repin(&self, session: &Session, pin: AgentPin) -> anyhow::Result<()> {
        let before = session.pin();
        session.set_pin(pin);
        let written = self.backend.save(self, session).await;
        if written.is_err()
            && let Some(before) = before
        {
            session.set_pin(before);
        }
        written
    }

    /// The agent versions the sessions this server knows are bound to.
    pub fn pins(&self) -> std::collections::HashSet<AgentPin> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index.by_id.values().filter_map(|s| s.pin()).collect()
    }

    /// Whether a write call holds the session's write slot, on any server.
    pub async fn is_busy(&self, session: &Session) -> Result<bool, Unavailable> {
        if session.is_busy() {
            return Ok(true);
        }
        self.backend.busy_elsewhere(session.id()).await
    }

    /// End the session `id` now: cancel its reminders and remove it,
    /// workspace and all. Refused while a write call runs in it.
    pub async fn remove(&self, id: &str) -> Result<Arc<Session>, RemoveError> {
        let not_found = || RemoveError::NotFound { id: id.to_string() };
        let busy = || RemoveError::Busy { id: id.to_string() };
        let session = self
            .backend
            .lookup(self, Lookup::Id(id), false)
            .await?
            .ok_or_else(not_found)?;
        if session.is_busy() {
            return Err(busy());
        }
        self.backend.end(self, &session).await?;
        self.discard(std::slice::from_ref(&session));
        Ok(session)
    }

    /// Remove what `sessions` (taken out of the index) kept on disk, and
    /// their pending reminders; their ids.
    fn discard(&self, sessions: &[Arc<Session>]) -> Vec<String> {
        let ids: Vec<String> = sessions.iter().map(|s| s.id().to_string()).collect();
        self.discard_ids(&ids);
        ids
    }

    /// Remove the folders of the sessions `ids` and forget their
    /// reminders. Each folder is first renamed out of the way while no
    /// reminder can be scheduled, so a call still ending in the session
    /// cannot leave a reminder (or its record) behind for a restart to
    /// load; the renamed folder is removed after.
    fn discard_ids(&self, ids: &[String]) {
        let mut graves = Vec::new();
        self.reminders.forget_sessions(ids, || {
            for id in ids {
                // Ids come from Redis too: one that is not a session id
                // names no folder of the store's (`../x`, `/etc`, `.agents`).
                if !is_session_id(id) {
                    tracing::warn!(
                        "not removing {}: it is not a session id",
                        crate::shown::quoted(id)
                    );
                    continue;
                }
                let dir = self.root.join(id);
                let grave = self.root.join(format!("{ENDED_PREFIX}{id}"));
                remove_quietly(&grave);
                match std::fs::rename(&dir, &grave) {
                    Ok(()) => graves.push(grave),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        tracing::warn!("cannot move session {} aside: {e}", dir.display());
                        remove_quietly(&dir);
                    }
                }
            }
        });
        for grave in graves {
            remove_quietly(&grave);
        }
    }

    /// How long an idle session (and any event) is kept.
    pub fn retention(&self) -> Duration {
        self.retention
    }

    /// The same store keeping at most `max` sessions (at least one).
    pub fn with_max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// The session with this id, if this server has it indexed (see
    /// [`SessionStore::find`] for the fleet's).
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index.by_id.get(id).cloned()
    }

    /// Every session, oldest first.
    pub async fn list(&self) -> Result<Vec<Listed>, Unavailable> {
        let mut sessions = self.backend.list(self).await?;
        sessions.sort_by_key(|listed| listed.session.created_at());
        Ok(sessions)
    }

    /// How many sessions this server has indexed.
    pub fn len_here(&self) -> usize {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index.by_id.len()
    }

    /// Forget sessions idle for longer than the retention period (never one
    /// a write call is running in or a reminder is pending in), removing
    /// their directories, and drop older events from the rest. Returns the
    /// ids removed. Shared, each server sweeps the whole fleet's sessions
    /// (each is removed by one), and drops idle ones from its index.
    pub async fn sweep(&self) -> Result<Vec<String>, Unavailable> {
        let retention = chrono::Duration::from_std(self.retention).unwrap_or(chrono::Duration::MAX);
        let cutoff = Utc::now()
            .checked_sub_signed(retention)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let reminded = self.reminders.sessions_pending();
        let idle: Vec<Arc<Session>> = {
            let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
            let ids: Vec<String> = index
                .by_id
                .values()
                .filter(|s| s.last_active() < cutoff && !s.is_busy() && !reminded.contains(s.id()))
                .map(|s| s.id().to_string())
                .collect();
            index.take(&ids)
        };
        for session in self.index_snapshot() {
            session.events().prune_before(cutoff);
        }
        self.backend.sweep(self, cutoff, idle).await
    }

    fn index_snapshot(&self) -> Vec<Arc<Session>> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index.by_id.values().cloned().collect()
    }
}

/// How stale a shared session's last activity in Redis may be: at most
/// this much earlier than its last bind.
const TOUCH_EVERY: chrono::TimeDelta = chrono::TimeDelta::seconds(1);

/// Whether `id` is a session id the store makes (`ses_` and hex), so a
/// record read from Redis cannot point the sweeper outside the root.
fn is_session_id(id: &str) -> bool {
    id.strip_prefix("ses_").is_some_and(|hex| {
        !hex.is_empty() && hex.len() <= 64 && hex.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

#[cfg(test)]
mod tests;
