//! The sessions a server hands out: created on request, found by id or
//! continuation token, persisted under the state directory, and forgotten
//! (workspace and all) once idle for the retention period.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde_json::Value;

use super::record::Record;
use super::reminders::{Reminder, ReminderBook, ReminderError};
use super::shared::{Created, Removal, SharedSessions, Stored};
use super::{
    AgentPin, Dirs, HistoryBudget, Session, SessionMode, SessionSpec, WORKSPACE_DIR, parse_instant,
};
use crate::redis_store::RedisStore;
use crate::redis_store::lease::LeaseTerms;

/// The file a session's record is kept in, inside its directory.
const RECORD_FILE: &str = "session.json";

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
    /// The owner's auth.
    pub auth: Option<Value>,
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
    /// The reminders pending in its sessions.
    reminders: ReminderBook,
    /// What sessions created without a pin are bound to.
    pin_source: RwLock<Option<PinSource>>,
    /// Where a fleet keeps its sessions; `None` on one machine.
    shared: Option<SharedSessions>,
}

impl std::fmt::Debug for SessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionStore")
            .field("root", &self.root)
            .field("retention", &self.retention)
            .field("shared", &self.shared.is_some())
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
    pub fn open_shared(
        root: impl Into<PathBuf>,
        retention: Duration,
        history: HistoryBudget,
        redis: Arc<RedisStore>,
        terms: LeaseTerms,
    ) -> anyhow::Result<Self> {
        let mut store = Self::empty(root.into(), retention, history)?;
        store.shared = Some(SharedSessions::new(redis, terms, &store.history));
        Ok(store)
    }

    fn empty(root: PathBuf, retention: Duration, history: HistoryBudget) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&root)
            .with_context(|| format!("cannot create the sessions folder {}", root.display()))?;
        Ok(Self {
            reminders: ReminderBook::new(root.clone()),
            root,
            retention,
            max_sessions: MAX_SESSIONS,
            history,
            index: RwLock::default(),
            pin_source: RwLock::default(),
            shared: None,
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
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
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
        let written = match &self.shared {
            None => write_record(&self.root.join(session.id()), session),
            Some(shared) => match shared.save(&Record::of(session)).await {
                Ok(true) => Ok(()),
                Ok(false) => Err(anyhow::anyhow!("session `{}` has ended", session.id())),
                Err(e) => Err(anyhow::anyhow!(Unavailable(e))),
            },
        };
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
        match &self.shared {
            None => Ok(false),
            Some(shared) => shared.busy(session.id()).await.map_err(Unavailable),
        }
    }

    /// End the session `id` now: cancel its reminders and remove it,
    /// workspace and all. Refused while a write call runs in it.
    pub async fn remove(&self, id: &str) -> Result<Arc<Session>, RemoveError> {
        let not_found = || RemoveError::NotFound { id: id.to_string() };
        let busy = || RemoveError::Busy { id: id.to_string() };
        let session = match &self.shared {
            None => self.get(id).ok_or_else(not_found)?,
            Some(_) => self.find(id).await?.ok_or_else(not_found)?,
        };
        if session.is_busy() {
            return Err(busy());
        }
        if let Some(shared) = &self.shared {
            match shared.remove(id).await.map_err(Unavailable)? {
                Removal::Done => {}
                Removal::Busy => return Err(busy()),
                Removal::Missing => return Err(not_found()),
            }
        }
        {
            let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
            if session.is_busy() {
                return Err(busy());
            }
            index.take(&[id.to_string()]);
        }
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

    fn discard_ids(&self, ids: &[String]) {
        for id in ids {
            let dir = self.root.join(id);
            if let Err(e) = std::fs::remove_dir_all(&dir)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!("cannot remove session {}: {e}", dir.display());
            }
        }
        self.reminders.forget_sessions(ids);
    }

    /// How long an idle session (and any event) is kept.
    pub fn retention(&self) -> Duration {
        self.retention
    }

    /// Create a session with its own workspace directory.
    pub async fn create(&self, new: NewSession) -> Result<Arc<Session>, StoreError> {
        let key = match (&new.channel, new.key) {
            (Some(channel), key) => {
                check_token_part("channel", channel)?;
                if channel.contains(':') {
                    return Err(StoreError::Invalid(format!(
                        "channel {channel:?} may not contain `:` (it separates channel and key in the continuation token)"
                    )));
                }
                let key = key.unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
                check_token_part("key", &key)?;
                Some(key)
            }
            (None, Some(_)) => {
                return Err(StoreError::Invalid(
                    "a key needs a channel: the continuation token is `<channel>:<key>`".into(),
                ));
            }
            (None, None) => None,
        };
        let id = format!("ses_{}", uuid::Uuid::new_v4().simple());
        let dir = self.root.join(&id);
        let spec = SessionSpec {
            id: Some(id.clone()),
            channel: new.channel,
            key,
            mode: new.mode,
            as_of: new.as_of,
            auth: new.auth,
            workspace: None,
            artifacts: None,
            pin: new.pin.or_else(|| self.default_pin()),
        };
        let session = Session::with_dirs(spec, Dirs::under(&dir), Utc::now(), self.history.clone());
        match &self.shared {
            None => self.create_here(session, &dir),
            Some(shared) => self.create_shared(shared, session, &dir).await,
        }
    }

    fn create_here(&self, session: Session, dir: &Path) -> Result<Arc<Session>, StoreError> {
        // Hold the write lock from the token check to the insert, so two
        // requests cannot both take one token.
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        if index.by_id.len() >= self.max_sessions {
            return Err(StoreError::Full {
                max: self.max_sessions,
            });
        }
        if let Some(token) = session.continuation_token()
            && let Some(existing) = index.by_token.get(&token)
        {
            return Err(StoreError::TokenTaken {
                token,
                session: existing.clone(),
            });
        }
        write_record(dir, &session)?;
        let session = Arc::new(session);
        if let Some(token) = session.continuation_token() {
            index.by_token.insert(token, session.id().to_string());
        }
        index
            .by_id
            .insert(session.id().to_string(), session.clone());
        Ok(session)
    }

    async fn create_shared(
        &self,
        shared: &SharedSessions,
        session: Session,
        dir: &Path,
    ) -> Result<Arc<Session>, StoreError> {
        std::fs::create_dir_all(dir.join(WORKSPACE_DIR))
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let token = session.continuation_token();
        let record = Record::of(&session);
        let now = session.created_at.timestamp_millis();
        let created = shared
            .create(&record, token.as_deref(), now, self.max_sessions)
            .await;
        let refused = match created {
            Ok(Created::Stored) => None,
            Ok(Created::Full) => Some(StoreError::Full {
                max: self.max_sessions,
            }),
            Ok(Created::TokenTaken(holder)) => Some(StoreError::TokenTaken {
                token: token.unwrap_or_default(),
                session: holder,
            }),
            Err(e) => Some(StoreError::Unavailable(Unavailable(e))),
        };
        if let Some(refused) = refused {
            let _ = std::fs::remove_dir_all(dir);
            return Err(refused);
        }
        Ok(self.insert(Arc::new(shared.share(session))))
    }

    /// The session holding the continuation token `<channel>:<key>`, or a
    /// new one made from `new` when none does: the session and whether it
    /// was started now. A racing start of the same token resumes the
    /// session that won.
    pub async fn resume_or_create(
        &self,
        new: NewSession,
    ) -> Result<(Arc<Session>, bool), StoreError> {
        let token = new
            .channel
            .as_deref()
            .zip(new.key.as_deref())
            .map(|(channel, key)| format!("{channel}:{key}"));
        if let Some(token) = token.as_deref()
            && let Some(session) = self.lookup(Lookup::Token(token), false).await?
        {
            return Ok((session, false));
        }
        match self.create(new).await {
            Ok(session) => Ok((session, true)),
            Err(StoreError::TokenTaken { token, session }) => match self.find(&session).await? {
                Some(found) => Ok((found, false)),
                None => Err(StoreError::TokenTaken { token, session }),
            },
            Err(e) => Err(e),
        }
    }

    fn default_pin(&self) -> Option<AgentPin> {
        let source = self
            .pin_source
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        source.and_then(|source| source())
    }

    /// The session holding the continuation token `token`, on any server
    /// of the fleet.
    pub async fn by_token(&self, token: &str) -> Result<Option<Arc<Session>>, Unavailable> {
        self.lookup(Lookup::Token(token), false).await
    }

    /// The session with this id, on any server of the fleet.
    pub async fn find(&self, id: &str) -> Result<Option<Arc<Session>>, Unavailable> {
        self.lookup(Lookup::Id(id), false).await
    }

    /// The session `by` names; `touch` marks it active. Shared, Redis is
    /// asked, and a session it no longer has (by id) is forgotten here.
    async fn lookup(
        &self,
        by: Lookup<'_>,
        touch: bool,
    ) -> Result<Option<Arc<Session>>, Unavailable> {
        let id = match by {
            Lookup::Id(id) => Some(id.to_string()),
            Lookup::Token(token) => self.local_id(token),
        };
        let Some(shared) = &self.shared else {
            return Ok(id.and_then(|id| self.get(&id)));
        };
        let touch_ms = self.touch_now(touch, id.as_deref());
        let stored = match by {
            Lookup::Id(id) => shared.load(id, touch_ms).await,
            Lookup::Token(token) => shared.load_by_token(token, touch_ms).await,
        }
        .map_err(Unavailable)?;
        if let (None, Lookup::Id(id)) = (&stored, by) {
            self.forget_here(id);
        }
        Ok(self.cached(shared, stored))
    }

    /// When to mark session `id` active in Redis if `touch` asks to: not
    /// when this server knows it was active within [`TOUCH_EVERY`] (the
    /// sweeps count in retention periods), which spares a call a write.
    fn touch_now(&self, touch: bool, id: Option<&str>) -> Option<i64> {
        let now = Utc::now();
        let recent = id
            .and_then(|id| self.get(id))
            .is_some_and(|s| now - s.last_active() < TOUCH_EVERY);
        (touch && !recent).then(|| now.timestamp_millis())
    }

    /// The id this server has indexed for the continuation token `token`.
    fn local_id(&self, token: &str) -> Option<String> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index.by_token.get(token).cloned()
    }

    /// The indexed session a record from Redis describes, brought up to
    /// date (another server may have moved its version), or indexed now.
    fn cached(&self, shared: &SharedSessions, stored: Option<Stored>) -> Option<Arc<Session>> {
        let Stored {
            record,
            last_active_ms,
        } = stored?;
        if !is_session_id(&record.id) {
            tracing::warn!(
                id = record.id,
                "a session record in Redis has an invalid id"
            );
            return None;
        }
        let session = match self.get(&record.id) {
            Some(session) => {
                if let Some(pin) = record
                    .agent
                    .filter(|pin| session.pin().as_ref() != Some(pin))
                {
                    session.set_pin(pin);
                }
                session
            }
            None => {
                let id = record.id.clone();
                match self.session_from(record) {
                    Ok(session) => self.insert(Arc::new(shared.share(session))),
                    Err(e) => {
                        tracing::warn!("session `{id}` in Redis cannot be read: {e:#}");
                        return None;
                    }
                }
            }
        };
        session.seen_at(last_active_ms);
        Some(session)
    }

    /// Drop the session `id` from this server's index: another server
    /// removed it.
    fn forget_here(&self, id: &str) {
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        index.take(&[id.to_string()]);
    }

    fn scratch_session(&self, spec: SessionSpec) -> Bound {
        Bound {
            session: Arc::new(Session::with_dirs(
                spec,
                Dirs::scratch(),
                Utc::now(),
                self.history.clone(),
            )),
            scratch: true,
        }
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
    pub async fn list(&self) -> Result<Vec<Arc<Session>>, Unavailable> {
        let mut sessions: Vec<Arc<Session>> = match &self.shared {
            None => {
                let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
                index.by_id.values().cloned().collect()
            }
            Some(shared) => shared
                .list()
                .await
                .map_err(Unavailable)?
                .into_iter()
                .filter_map(|stored| self.cached(shared, Some(stored)))
                .collect(),
        };
        sessions.sort_by_key(|s| s.created_at());
        Ok(sessions)
    }

    /// How many sessions this server has indexed.
    pub fn len_here(&self) -> usize {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index.by_id.len()
    }

    /// Bind a call to its session by the request's `sessionId` or
    /// `continuationToken`, checking that `caller` may use it. With neither,
    /// or a token no session holds, the call gets a scratch session of its
    /// own (with the token's channel and key as its identity).
    pub async fn bind(
        &self,
        session_id: Option<&str>,
        token: Option<&str>,
        caller: Option<&Value>,
    ) -> Result<Bound, BindError> {
        self.bind_or(session_id, token, caller, SessionSpec::default())
            .await
    }

    /// [`SessionStore::bind`], with a scratch session made from `scratch`
    /// (its mode, asOf and channel; the request supplies the auth, and a
    /// token its channel and key).
    pub async fn bind_or(
        &self,
        session_id: Option<&str>,
        token: Option<&str>,
        caller: Option<&Value>,
        scratch: SessionSpec,
    ) -> Result<Bound, BindError> {
        let session = match (session_id, token) {
            (Some(_), Some(_)) => {
                return Err(BindError::InvalidToken {
                    reason: "pass either sessionId or continuationToken, not both".into(),
                });
            }
            (Some(id), None) => self
                .lookup(Lookup::Id(id), true)
                .await?
                .ok_or_else(|| BindError::SessionNotFound { id: id.to_string() })?,
            (None, Some(token)) => {
                let (channel, key) = split_token(token)?;
                match self.lookup(Lookup::Token(token), true).await? {
                    Some(session) => session,
                    None => {
                        return Ok(self.scratch_session(SessionSpec {
                            id: Some(token.to_string()),
                            channel: Some(channel.to_string()),
                            key: Some(key.to_string()),
                            auth: caller.cloned(),
                            ..scratch
                        }));
                    }
                }
            }
            (None, None) => {
                return Ok(self.scratch_session(SessionSpec {
                    auth: caller.cloned(),
                    ..scratch
                }));
            }
        };
        if !session.admits(caller) {
            return Err(BindError::NotOwner {
                session: session.id().to_string(),
            });
        }
        session.touch();
        Ok(Bound {
            session,
            scratch: false,
        })
    }

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
                tokio::task::spawn_blocking(move || store.reminders.schedule(reminder))
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
                tokio::task::spawn_blocking(move || store.reminders.cancel(&session, &id))
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
        taken.unwrap_or_else(|e| {
            tracing::error!("taking the due reminders failed: {e}");
            Vec::new()
        })
    }

    /// When the soonest pending reminder is due; shared, at most a second
    /// from now, since another server may set one.
    pub async fn next_reminder_due(&self) -> Option<DateTime<Utc>> {
        let Some(shared) = &self.shared else {
            return self.reminders.next_due();
        };
        let poll = Utc::now() + SHARED_REMINDER_POLL;
        match shared.reminders().next_due().await {
            Ok(Some(due)) => Some(due.min(poll)),
            Ok(None) => Some(poll),
            Err(e) => {
                tracing::warn!("reminders: {e}");
                Some(poll)
            }
        }
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
        let Some(shared) = &self.shared else {
            return Ok(self.discard(&idle));
        };
        // Idle here is not idle everywhere: Redis decides what goes.
        let removed = shared
            .sweep(cutoff.timestamp_millis())
            .await
            .map_err(Unavailable)?;
        self.index
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take(&removed);
        self.discard_ids(&removed);
        Ok(removed)
    }

    fn index_snapshot(&self) -> Vec<Arc<Session>> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index.by_id.values().cloned().collect()
    }
}

/// How a request names a session.
#[derive(Clone, Copy)]
enum Lookup<'a> {
    /// By its id.
    Id(&'a str),
    /// By its continuation token, `<channel>:<key>`.
    Token(&'a str),
}

/// How often a server looks for due reminders in Redis when none it knows
/// of is due sooner (another server may have set one).
const SHARED_REMINDER_POLL: chrono::TimeDelta = chrono::TimeDelta::seconds(1);

/// How stale a shared session's last activity in Redis may be: at most
/// this much earlier than its last bind.
const TOUCH_EVERY: chrono::TimeDelta = chrono::TimeDelta::seconds(1);

/// Whether `id` is a session id the store makes (`ses_` and hex), so a
/// record read from Redis cannot point the sweeper outside the root.
fn is_session_id(id: &str) -> bool {
    id.strip_prefix("ses_")
        .is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_alphanumeric()))
}

fn split_token(token: &str) -> Result<(&str, &str), BindError> {
    match token.split_once(':') {
        Some((channel, key)) if !channel.is_empty() && !key.is_empty() => Ok((channel, key)),
        _ => Err(BindError::InvalidToken {
            reason: format!("{token:?} is not of the form `<channelId>:<key>`"),
        }),
    }
}

fn check_token_part(what: &str, text: &str) -> Result<(), StoreError> {
    if text.is_empty() || text.len() > 256 || text.chars().any(char::is_control) {
        return Err(StoreError::Invalid(format!(
            "{what} {text:?} must be 1 to 256 characters without control characters"
        )));
    }
    Ok(())
}

/// Write the record atomically (temporary file, fsync, rename) and make the workspace.
fn write_record(dir: &Path, session: &Session) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir.join(WORKSPACE_DIR))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let record = Record::of(session);
    crate::files::write_atomically(&dir.join(RECORD_FILE), &serde_json::to_vec_pretty(&record)?)
        .context("cannot write the session record")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn store(root: &Path) -> SessionStore {
        SessionStore::open(root, Duration::from_secs(3600)).unwrap()
    }

    #[tokio::test]
    async fn sessions_survive_a_restart_with_their_tokens() {
        let root = tempfile::tempdir().unwrap();
        let id = {
            let store = store(root.path());
            let session = store
                .create(NewSession {
                    channel: Some("slack".into()),
                    key: Some("T1".into()),
                    mode: SessionMode::DryRun,
                    as_of: Some(parse_instant("2026-01-31T12:00:00Z").unwrap()),
                    auth: Some(json!({"user": "ada"})),
                    pin: Some(AgentPin {
                        name: "default".into(),
                        version: 3,
                    }),
                })
                .await
                .unwrap();
            std::fs::write(session.workspace().unwrap().join("f"), "kept").unwrap();
            session.id().to_string()
        };
        let store = store(root.path());
        let bound = store
            .bind(None, Some("slack:T1"), Some(&json!({"user": "ada"})))
            .await
            .unwrap();
        assert!(!bound.scratch);
        assert_eq!(bound.session.id(), id);
        assert_eq!(bound.session.mode(), SessionMode::DryRun);
        assert!(bound.session.as_of().is_some());
        assert_eq!(bound.session.pin().map(|p| p.version), Some(3));
        let file = bound.session.workspace().unwrap().join("f");
        assert_eq!(std::fs::read_to_string(file).unwrap(), "kept");
    }

    #[tokio::test]
    async fn a_record_naming_another_folder_is_skipped_and_never_swept() {
        let root = tempfile::tempdir().unwrap();
        let sessions = root.path().join("sessions");
        let outside = root.path().join("precious");
        std::fs::create_dir_all(&outside).unwrap();
        let id = store(&sessions)
            .create(NewSession::default())
            .await
            .unwrap()
            .id()
            .to_string();
        let record = sessions.join(&id).join(RECORD_FILE);
        let text = std::fs::read_to_string(&record).unwrap();
        std::fs::write(&record, text.replace(&id, "../precious")).unwrap();
        let reopened = SessionStore::open(&sessions, Duration::ZERO).unwrap();
        assert!(
            reopened.list().await.unwrap().is_empty(),
            "the record is skipped"
        );
        reopened.sweep().await.unwrap();
        assert!(
            outside.is_dir(),
            "nothing outside the sessions folder is removed"
        );
    }

    #[tokio::test]
    async fn a_full_store_refuses_one_more_session() {
        let root = tempfile::tempdir().unwrap();
        let store = store(root.path()).with_max_sessions(2);
        for _ in 0..2 {
            store.create(NewSession::default()).await.unwrap();
        }
        let err = store.create(NewSession::default()).await.unwrap_err();
        assert!(matches!(err, StoreError::Full { max: 2 }), "{err}");
        assert!(err.to_string().contains("keeps 2 sessions already"));
    }

    #[tokio::test]
    async fn binding_rules() {
        let root = tempfile::tempdir().unwrap();
        let store = store(root.path());
        let owned = store
            .create(NewSession {
                channel: Some("gh".into()),
                auth: Some(json!({"user": "ada"})),
                ..NewSession::default()
            })
            .await
            .unwrap();
        let ada = json!({"user": "ada"});
        let token = owned.continuation_token().unwrap();

        let both = store.bind(Some(owned.id()), Some(&token), Some(&ada)).await;
        assert_eq!(both.unwrap_err().code(), "invalid_continuation_token");
        let bad = store.bind(None, Some("no-colon"), Some(&ada)).await;
        assert_eq!(bad.unwrap_err().code(), "invalid_continuation_token");
        let missing = store.bind(Some("ses_nope"), None, None).await;
        assert_eq!(missing.unwrap_err().code(), "session_not_found");
        let stranger = store
            .bind(Some(owned.id()), None, Some(&json!({"user": "bob"})))
            .await;
        assert_eq!(stranger.unwrap_err().code(), "session_forbidden");

        let by_token = store.bind(None, Some(&token), Some(&ada)).await.unwrap();
        assert_eq!(by_token.session.id(), owned.id());
        let unmapped = store.bind(None, Some("gh:other"), None).await.unwrap();
        assert!(unmapped.scratch);
        assert_eq!(unmapped.session.channel(), Some("gh"));
        assert_eq!(unmapped.session.key(), Some("other"));
        assert!(store.bind(None, None, None).await.unwrap().scratch);
    }

    #[tokio::test]
    async fn a_token_names_one_session() {
        let root = tempfile::tempdir().unwrap();
        let store = store(root.path());
        let new = || NewSession {
            channel: Some("gh".into()),
            key: Some("42".into()),
            ..NewSession::default()
        };
        store.create(new()).await.unwrap();
        assert!(matches!(
            store.create(new()).await,
            Err(StoreError::TokenTaken { .. })
        ));
        let bad = store
            .create(NewSession {
                channel: Some("a:b".into()),
                ..NewSession::default()
            })
            .await;
        assert!(matches!(bad, Err(StoreError::Invalid(_))));
    }

    #[tokio::test]
    async fn idle_sessions_are_swept_with_their_workspace() {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::open(root.path(), Duration::ZERO).unwrap();
        let session = store.create(NewSession::default()).await.unwrap();
        let dir = session.workspace().unwrap().to_path_buf();
        let held = session.try_write_slot().unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(
            store.sweep().await.unwrap().is_empty(),
            "a busy session is kept"
        );
        drop(held);
        assert_eq!(store.sweep().await.unwrap(), vec![session.id().to_string()]);
        assert!(!dir.exists());
        assert!(store.get(session.id()).is_none());
    }

    /// Two servers' stores over one Redis and one sessions folder.
    mod shared {
        use super::*;
        use crate::config::state::{Backend, StateSettings};
        use crate::session::{Event, EventData, EventKind, SlotRefused};
        use toolhost_test_artifacts::redis::RedisServer;

        struct Fleet {
            a: SessionStore,
            b: SessionStore,
            root: tempfile::TempDir,
            _server: RedisServer,
        }

        fn fleet(retention: Duration) -> Option<Fleet> {
            let server = RedisServer::start()?;
            let settings = StateSettings {
                backend: Backend::Redis,
                redis_url: Some(server.url()),
                ..StateSettings::default()
            };
            let root = tempfile::tempdir().unwrap();
            let open = || {
                let redis = RedisStore::open(&settings).unwrap();
                let terms = LeaseTerms::new(Duration::from_secs(2));
                SessionStore::open_shared(
                    root.path(),
                    retention,
                    HistoryBudget::default(),
                    redis,
                    terms,
                )
                .unwrap()
            };
            Some(Fleet {
                a: open(),
                b: open(),
                root,
                _server: server,
            })
        }

        #[tokio::test]
        async fn a_session_made_on_one_server_binds_on_another() {
            let Some(fleet) = fleet(Duration::from_secs(3600)) else {
                return;
            };
            let ada = json!({"user": "ada"});
            let made = fleet
                .a
                .create(NewSession {
                    channel: Some("gh".into()),
                    key: Some("PR-1".into()),
                    mode: SessionMode::DryRun,
                    auth: Some(ada.clone()),
                    pin: Some(AgentPin {
                        name: "default".into(),
                        version: 2,
                    }),
                    ..NewSession::default()
                })
                .await
                .unwrap();
            assert!(
                !fleet.root.path().join(made.id()).join(RECORD_FILE).exists(),
                "the record is in Redis, not in the shared folder"
            );
            let bound = fleet
                .b
                .bind(None, Some("gh:PR-1"), Some(&ada))
                .await
                .unwrap();
            assert!(!bound.scratch);
            assert_eq!(bound.session.id(), made.id());
            assert_eq!(bound.session.mode(), SessionMode::DryRun);
            assert_eq!(
                bound.session.workspace().unwrap(),
                made.workspace().unwrap()
            );
            let bob = json!({"user": "bob"});
            let stranger = fleet.b.bind(Some(made.id()), None, Some(&bob)).await;
            assert_eq!(stranger.unwrap_err().code(), "session_forbidden");

            let taken = fleet
                .b
                .create(NewSession {
                    channel: Some("gh".into()),
                    key: Some("PR-1".into()),
                    ..NewSession::default()
                })
                .await;
            assert!(
                matches!(&taken, Err(StoreError::TokenTaken { session, .. }) if session == made.id()),
                "one token, one session across the fleet"
            );

            fleet
                .a
                .repin(
                    &made,
                    AgentPin {
                        name: "default".into(),
                        version: 3,
                    },
                )
                .await
                .unwrap();
            let seen = fleet.b.find(made.id()).await.unwrap().unwrap();
            assert_eq!(
                seen.pin().map(|p| p.version),
                Some(3),
                "an upgrade on A is seen on B"
            );
            assert_eq!(fleet.b.list().await.unwrap().len(), 1);
        }

        #[tokio::test]
        async fn one_write_slot_across_the_fleet() {
            let Some(fleet) = fleet(Duration::from_secs(3600)) else {
                return;
            };
            let made = fleet.a.create(NewSession::default()).await.unwrap();
            let on_b = fleet.b.find(made.id()).await.unwrap().unwrap();
            assert!(!Arc::ptr_eq(&made, &on_b), "each server has its own copy");

            let held = made.write_slot().await.unwrap();
            assert!(matches!(on_b.write_slot().await, Err(SlotRefused::Busy)));
            assert!(fleet.b.is_busy(&on_b).await.unwrap(), "B sees A's call");
            let ended = fleet.b.remove(made.id()).await;
            assert!(matches!(ended, Err(RemoveError::Busy { .. })), "{ended:?}");
            drop(held);
            let mut taken = None;
            for _ in 0..100 {
                if let Ok(slot) = on_b.write_slot().await {
                    taken = Some(slot);
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert!(
                taken.is_some(),
                "a released slot is free for another server"
            );
        }

        #[tokio::test]
        async fn ending_a_session_on_one_server_ends_it_everywhere() {
            let Some(fleet) = fleet(Duration::from_secs(3600)) else {
                return;
            };
            let made = fleet
                .a
                .create(NewSession {
                    channel: Some("slack".into()),
                    ..NewSession::default()
                })
                .await
                .unwrap();
            let token = made.continuation_token().unwrap();
            let dir = made.workspace().unwrap().to_path_buf();
            fleet.b.remove(made.id()).await.unwrap();
            assert!(!dir.exists(), "its workspace goes with it");
            assert!(fleet.a.find(made.id()).await.unwrap().is_none());
            assert!(fleet.a.get(made.id()).is_none(), "A forgets its copy");
            assert!(fleet.a.by_token(&token).await.unwrap().is_none());
            let again = fleet.b.remove(made.id()).await;
            assert!(
                matches!(again, Err(RemoveError::NotFound { .. })),
                "{again:?}"
            );
        }

        #[tokio::test]
        async fn the_fleet_sweeps_each_idle_session_once_and_keeps_busy_and_reminded_ones() {
            let Some(fleet) = fleet(Duration::ZERO) else {
                return;
            };
            let idle = fleet.a.create(NewSession::default()).await.unwrap();
            let busy = fleet.a.create(NewSession::default()).await.unwrap();
            let reminded = fleet.a.create(NewSession::default()).await.unwrap();
            let _held = busy.write_slot().await.unwrap();
            let due = Utc::now() + chrono::Duration::hours(1);
            fleet.a.keep_until(reminded.id(), due).await.unwrap();
            let dir = idle.workspace().unwrap().to_path_buf();
            tokio::time::sleep(Duration::from_millis(5)).await;

            let (on_a, on_b) = tokio::join!(fleet.a.sweep(), fleet.b.sweep());
            let mut swept = on_a.unwrap();
            swept.extend(on_b.unwrap());
            assert_eq!(
                swept,
                vec![idle.id().to_string()],
                "removed by exactly one server"
            );
            assert!(!dir.exists());
            let left: Vec<String> = fleet
                .b
                .list()
                .await
                .unwrap()
                .iter()
                .map(|s| s.id().to_string())
                .collect();
            assert_eq!(left.len(), 2, "{left:?}");
            assert!(
                left.contains(&busy.id().to_string()) && left.contains(&reminded.id().to_string())
            );
        }

        #[tokio::test]
        async fn the_fleet_keeps_at_most_its_sessions() {
            let Some(fleet) = fleet(Duration::from_secs(3600)) else {
                return;
            };
            let Fleet { a, b, .. } = fleet;
            let (a, b) = (a.with_max_sessions(2), b.with_max_sessions(2));
            a.create(NewSession::default()).await.unwrap();
            b.create(NewSession::default()).await.unwrap();
            let err = a.create(NewSession::default()).await.unwrap_err();
            assert!(matches!(err, StoreError::Full { max: 2 }), "{err}");
        }

        /// The next event `followed` gives, within 5 s.
        async fn next(followed: &mut futures::stream::BoxStream<'static, Event>) -> Event {
            use futures::StreamExt as _;
            tokio::time::timeout(Duration::from_secs(5), followed.next())
                .await
                .expect("an event in time")
                .expect("the stream goes on")
        }

        #[tokio::test]
        async fn events_recorded_on_one_server_are_read_and_followed_on_another() {
            let Some(fleet) = fleet(Duration::from_secs(3600)) else {
                return;
            };
            let on_a = fleet.a.create(NewSession::default()).await.unwrap();
            let on_b = fleet.b.find(on_a.id()).await.unwrap().unwrap();
            let event = |n: u64| EventData::Json(json!({ "n": n }));
            on_a.events().emit(EventKind::UserMessage, event(1));
            let second = on_a.events().append(EventKind::UserMessage, event(2)).await;
            assert_eq!(
                second.unwrap(),
                2,
                "emitted before on A, so appended before"
            );
            let third = on_b
                .events()
                .append(EventKind::ReminderFired, event(3))
                .await;
            assert_eq!(third.unwrap(), 3, "one sequence for the fleet");

            let kept = on_b.events().since(None).await.unwrap();
            let seen: Vec<(u64, EventKind, Value)> = kept
                .iter()
                .map(|e| (e.id, e.kind, e.to_json()["data"]["n"].clone()))
                .collect();
            assert_eq!(
                seen,
                vec![
                    (1, EventKind::UserMessage, json!(1)),
                    (2, EventKind::UserMessage, json!(2)),
                    (3, EventKind::ReminderFired, json!(3)),
                ]
            );
            assert_eq!(on_b.events().since(Some(2)).await.unwrap().len(), 1);
            let got = on_a.events().get(2).await.unwrap().unwrap();
            assert_eq!(got.to_json()["data"]["n"], 2);
            assert!(on_a.events().get(9).await.unwrap().is_none());

            let mut followed = on_b.follow_events(Some(1));
            assert_eq!(
                next(&mut followed).await.id,
                2,
                "replayed after Last-Event-ID"
            );
            assert_eq!(next(&mut followed).await.id, 3);
            let started = std::time::Instant::now();
            on_a.events().emit(EventKind::UserMessage, event(4));
            let live = next(&mut followed).await;
            assert_eq!(
                (live.id, live.to_json()["data"]["n"].clone()),
                (4, json!(4))
            );
            assert!(
                started.elapsed() < Duration::from_millis(900),
                "woken by the feed, not the 1 s re-read: {:?}",
                started.elapsed()
            );
        }

        #[tokio::test]
        async fn following_a_session_ends_once_another_server_ends_it() {
            use futures::StreamExt as _;

            let Some(fleet) = fleet(Duration::from_secs(3600)) else {
                return;
            };
            let on_a = fleet.a.create(NewSession::default()).await.unwrap();
            let on_b = fleet.b.find(on_a.id()).await.unwrap().unwrap();
            let mut followed = on_b.follow_events(None);
            fleet.a.remove(on_a.id()).await.unwrap();
            let ended = tokio::time::timeout(Duration::from_secs(5), followed.next()).await;
            assert!(
                matches!(ended, Ok(None)),
                "the stream ends with its session"
            );
        }

        #[tokio::test]
        async fn a_sessions_stream_is_held_to_its_bytes_and_goes_with_it() {
            let Some(server) = RedisServer::start() else {
                return;
            };
            let settings = StateSettings {
                backend: Backend::Redis,
                redis_url: Some(server.url()),
                ..StateSettings::default()
            };
            let redis = RedisStore::open(&settings).unwrap();
            let root = tempfile::tempdir().unwrap();
            // Each event below holds 256 + ~1 KiB: five fit in 8 KiB.
            let store = SessionStore::open_shared(
                root.path(),
                Duration::from_secs(3600),
                HistoryBudget::new(8 << 10, 1 << 20),
                redis.clone(),
                LeaseTerms::new(Duration::from_secs(2)),
            )
            .unwrap();
            let session = store.create(NewSession::default()).await.unwrap();
            let text = "x".repeat(1000);
            for n in 1..=20 {
                let data = EventData::Json(json!({ "n": n, "text": text }));
                session
                    .events()
                    .append(EventKind::UserMessage, data)
                    .await
                    .unwrap();
            }
            let kept = session.events().since(None).await.unwrap();
            let ids: Vec<u64> = kept.iter().map(|e| e.id).collect();
            assert_eq!(ids, (15..=20).collect::<Vec<u64>>(), "the newest that fit");
            let all_bytes = || async {
                redis::cmd("GET")
                    .arg(redis.key("evbytes", &[]))
                    .query_async::<Option<i64>>(&mut redis.connection())
                    .await
                    .unwrap()
                    .unwrap_or(0)
            };
            assert!(all_bytes().await <= 8 << 10);
            store.remove(session.id()).await.unwrap();
            assert_eq!(all_bytes().await, 0, "its bytes are given back");
            let stream_left: bool = redis::cmd("EXISTS")
                .arg(redis.key("events", &[session.id()]))
                .query_async(&mut redis.connection())
                .await
                .unwrap();
            assert!(!stream_left, "its stream is gone");
        }

        fn reminder(session: &str, id: &str, in_ms: i64) -> Reminder {
            Reminder::sample(id, session, in_ms)
        }

        #[tokio::test]
        async fn reminders_set_on_one_server_are_listed_cancelled_and_taken_once_by_the_fleet() {
            let Some(fleet) = fleet(Duration::from_secs(3600)) else {
                return;
            };
            let (a, b) = (Arc::new(fleet.a), Arc::new(fleet.b));
            let session = a.create(NewSession::default()).await.unwrap();
            let id = session.id().to_string();
            a.schedule_reminder(reminder(&id, "rem_later", 3_600_000))
                .await
                .unwrap();
            for n in 0..20 {
                let due = reminder(&id, &format!("rem_{n:02}"), -1);
                a.schedule_reminder(due).await.unwrap();
            }
            let listed = b.pending_reminders(&id).await.unwrap();
            assert_eq!(listed.len(), 21, "B lists what A set");
            assert_eq!(
                listed.last().map(|r| r.id.as_str()),
                Some("rem_later"),
                "soonest first"
            );
            let next = b.next_reminder_due().await.unwrap();
            assert!(next <= Utc::now(), "due now, though B set none");

            let (on_a, on_b) = tokio::join!(a.take_due_reminders(), b.take_due_reminders());
            let mut taken: Vec<String> = on_a.iter().chain(&on_b).map(|r| r.id.clone()).collect();
            taken.sort();
            let expected: Vec<String> = (0..20).map(|n| format!("rem_{n:02}")).collect();
            assert_eq!(
                taken, expected,
                "each due reminder taken by exactly one server"
            );
            assert!(a.take_due_reminders().await.is_empty());

            assert!(
                !a.cancel_reminder("ses_other", "rem_later").await.unwrap(),
                "not its session"
            );
            assert!(b.cancel_reminder(&id, "rem_later").await.unwrap());
            assert!(a.pending_reminders(&id).await.unwrap().is_empty());
            assert!(!b.cancel_reminder(&id, "rem_later").await.unwrap(), "once");
        }

        #[tokio::test]
        async fn a_sessions_reminders_are_capped_fleet_wide_and_go_with_it() {
            use crate::session::reminders::MAX_PENDING_PER_SESSION;

            let Some(fleet) = fleet(Duration::from_secs(3600)) else {
                return;
            };
            let (a, b) = (Arc::new(fleet.a), Arc::new(fleet.b));
            let session = a.create(NewSession::default()).await.unwrap();
            let id = session.id().to_string();
            for n in 0..MAX_PENDING_PER_SESSION {
                let store = if n % 2 == 0 { &a } else { &b };
                store
                    .schedule_reminder(reminder(&id, &format!("rem_{n}"), 60_000))
                    .await
                    .unwrap();
            }
            let err = a
                .schedule_reminder(reminder(&id, "rem_more", 60_000))
                .await
                .unwrap_err();
            assert!(
                err.to_string().contains("reminders pending already"),
                "{err}"
            );
            b.remove(&id).await.unwrap();
            assert!(a.pending_reminders(&id).await.unwrap().is_empty());
            let shared = a.shared.as_ref().unwrap();
            let left: usize = redis::cmd("ZCARD")
                .arg(shared.reminders().pending_key())
                .query_async(&mut shared.connection())
                .await
                .unwrap();
            assert_eq!(left, 0, "none left in the fleet's set");
        }

        #[tokio::test]
        async fn a_record_in_redis_naming_a_folder_outside_is_ignored() {
            let Some(fleet) = fleet(Duration::from_secs(3600)) else {
                return;
            };
            let made = fleet.a.create(NewSession::default()).await.unwrap();
            let shared = fleet.b.shared.as_ref().unwrap();
            let mut record = Record::of(&made);
            record.id = "../precious".into();
            redis::cmd("SET")
                .arg(shared.record_key(made.id()))
                .arg(serde_json::to_string(&record).unwrap())
                .query_async::<()>(&mut shared.connection())
                .await
                .unwrap();
            assert!(fleet.b.find(made.id()).await.unwrap().is_none());
            assert!(fleet.b.list().await.unwrap().is_empty());
        }

        #[tokio::test]
        async fn a_store_whose_redis_is_gone_says_so() {
            let Some(mut fleet) = fleet(Duration::from_secs(3600)) else {
                return;
            };
            let made = fleet.a.create(NewSession::default()).await.unwrap();
            fleet._server.kill();
            let err = fleet.b.bind(Some(made.id()), None, None).await.unwrap_err();
            assert_eq!(err.code(), "state_unavailable");
            assert!(err.to_string().contains("Redis at redis://"), "{err}");
            let refused = made.write_slot().await;
            assert!(
                matches!(refused, Err(SlotRefused::Unavailable(_))),
                "{refused:?}"
            );
        }
    }
}
