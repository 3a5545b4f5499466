//! The sessions a server hands out: created on request, found by id or
//! continuation token, persisted under the state directory, and forgotten
//! (workspace and all) once idle for the retention period.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::reminders::ReminderBook;
use super::{
    AgentPin, Dirs, HistoryBudget, Session, SessionMode, SessionSpec, WORKSPACE_DIR, parse_instant,
};

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
}

impl BindError {
    /// The stable code surfaces report.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidToken { .. } => "invalid_continuation_token",
            Self::SessionNotFound { .. } => "session_not_found",
            Self::NotOwner { .. } => "session_forbidden",
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
}

/// The most sessions one store keeps (idle ones expire on their own).
pub const MAX_SESSIONS: usize = 10_000;

/// A session's record on disk.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    id: String,
    channel: Option<String>,
    key: Option<String>,
    mode: SessionMode,
    as_of: Option<String>,
    auth: Option<Value>,
    created_at: DateTime<Utc>,
    /// Absent in records written before sessions kept a version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent: Option<AgentPin>,
}

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

/// The sessions of one server.
pub struct SessionStore {
    root: PathBuf,
    retention: Duration,
    max_sessions: usize,
    /// What its sessions' histories may hold, each and together.
    history: HistoryBudget,
    index: RwLock<Index>,
    /// The reminders pending in its sessions.
    reminders: ReminderBook,
    /// What sessions created without a pin are bound to.
    pin_source: RwLock<Option<PinSource>>,
}

impl std::fmt::Debug for SessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionStore")
            .field("root", &self.root)
            .field("retention", &self.retention)
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
        let root = root.into();
        std::fs::create_dir_all(&root)
            .with_context(|| format!("cannot create the sessions folder {}", root.display()))?;
        let store = Self {
            reminders: ReminderBook::new(root.clone()),
            root,
            retention,
            max_sessions: MAX_SESSIONS,
            history,
            index: RwLock::default(),
            pin_source: RwLock::default(),
        };
        for entry in std::fs::read_dir(&store.root)? {
            let dir = entry?.path();
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
        let as_of = record
            .as_of
            .as_deref()
            .map(parse_instant)
            .transpose()
            .map_err(|e| anyhow::anyhow!("asOf {e}"))?;
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
            Dirs::under(dir),
            record.created_at,
            self.history.clone(),
        ))
    }

    fn insert(&self, session: Arc<Session>) {
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(token) = session.continuation_token() {
            index.by_token.insert(token, session.id().to_string());
        }
        index.by_id.insert(session.id().to_string(), session);
    }

    /// The reminders pending in the store's sessions.
    pub fn reminders(&self) -> &ReminderBook {
        &self.reminders
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
    pub fn repin(&self, session: &Session, pin: AgentPin) -> anyhow::Result<()> {
        let before = session.pin();
        session.set_pin(pin);
        let written = write_record(&self.root.join(session.id()), session);
        if written.is_err()
            && let Some(before) = before
        {
            session.set_pin(before);
        }
        written
    }

    /// The agent versions the store's sessions are bound to.
    pub fn pins(&self) -> std::collections::HashSet<AgentPin> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index.by_id.values().filter_map(|s| s.pin()).collect()
    }

    /// End the session `id` now: cancel its reminders and remove it,
    /// workspace and all. Refused while a write call runs in it.
    pub fn remove(&self, id: &str) -> Result<Arc<Session>, RemoveError> {
        let session = {
            let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
            let session = index
                .by_id
                .get(id)
                .cloned()
                .ok_or_else(|| RemoveError::NotFound { id: id.to_string() })?;
            if session.is_busy() {
                return Err(RemoveError::Busy { id: id.to_string() });
            }
            index.take(&[id.to_string()]);
            session
        };
        self.discard(std::slice::from_ref(&session));
        Ok(session)
    }

    /// Remove what `sessions` (taken out of the index) kept on disk, and
    /// their pending reminders; their ids.
    fn discard(&self, sessions: &[Arc<Session>]) -> Vec<String> {
        let ids: Vec<String> = sessions
            .iter()
            .map(|session| {
                let dir = self.root.join(session.id());
                if let Err(e) = std::fs::remove_dir_all(&dir) {
                    tracing::warn!("cannot remove session {}: {e}", dir.display());
                }
                session.id().to_string()
            })
            .collect();
        self.reminders.forget_sessions(&ids);
        ids
    }

    /// How long an idle session (and any event) is kept.
    pub fn retention(&self) -> Duration {
        self.retention
    }

    /// Create a session with its own workspace directory.
    pub fn create(&self, new: NewSession) -> Result<Arc<Session>, StoreError> {
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
        write_record(&dir, &session)?;
        let session = Arc::new(session);
        if let Some(token) = session.continuation_token() {
            index.by_token.insert(token, id.clone());
        }
        index.by_id.insert(id, session.clone());
        Ok(session)
    }

    /// The session holding the continuation token `<channel>:<key>`, or a
    /// new one made from `new` when none does: the session and whether it
    /// was started now. A racing start of the same token resumes the
    /// session that won.
    pub fn resume_or_create(&self, new: NewSession) -> Result<(Arc<Session>, bool), StoreError> {
        let token = new
            .channel
            .as_deref()
            .zip(new.key.as_deref())
            .map(|(channel, key)| format!("{channel}:{key}"));
        if let Some(session) = token.as_deref().and_then(|t| self.by_token(t)) {
            return Ok((session, false));
        }
        match self.create(new) {
            Ok(session) => Ok((session, true)),
            Err(StoreError::TokenTaken { token, session }) => self
                .get(&session)
                .map(|found| (found, false))
                .ok_or(StoreError::TokenTaken { token, session }),
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

    /// The session holding the continuation token `token`.
    pub fn by_token(&self, token: &str) -> Option<Arc<Session>> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index
            .by_token
            .get(token)
            .and_then(|id| index.by_id.get(id))
            .cloned()
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

    /// The session with this id.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index.by_id.get(id).cloned()
    }

    /// Every session, oldest first.
    pub fn list(&self) -> Vec<Arc<Session>> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        let mut sessions: Vec<_> = index.by_id.values().cloned().collect();
        sessions.sort_by_key(|s| s.created_at());
        sessions
    }

    /// Bind a call to its session by the request's `sessionId` or
    /// `continuationToken`, checking that `caller` may use it. With neither,
    /// or a token no session holds, the call gets a scratch session of its
    /// own (with the token's channel and key as its identity).
    pub fn bind(
        &self,
        session_id: Option<&str>,
        token: Option<&str>,
        caller: Option<&Value>,
    ) -> Result<Bound, BindError> {
        self.bind_or(session_id, token, caller, SessionSpec::default())
    }

    /// [`SessionStore::bind`], with a scratch session made from `scratch`
    /// (its mode, asOf and channel; the request supplies the auth, and a
    /// token its channel and key).
    pub fn bind_or(
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
                .get(id)
                .ok_or_else(|| BindError::SessionNotFound { id: id.to_string() })?,
            (None, Some(token)) => {
                let (channel, key) = split_token(token)?;
                match self.by_token(token) {
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

    /// Forget sessions idle for longer than the retention period (never one
    /// a write call is running in or a reminder is pending in), removing
    /// their directories, and drop older events from the rest. Returns the
    /// ids removed.
    pub fn sweep(&self) -> Vec<String> {
        let retention = chrono::Duration::from_std(self.retention).unwrap_or(chrono::Duration::MAX);
        let cutoff = Utc::now()
            .checked_sub_signed(retention)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let reminded = self.reminders.sessions_pending();
        let expired: Vec<Arc<Session>> = {
            let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
            let ids: Vec<String> = index
                .by_id
                .values()
                .filter(|s| s.last_active() < cutoff && !s.is_busy() && !reminded.contains(s.id()))
                .map(|s| s.id().to_string())
                .collect();
            index.take(&ids)
        };
        for session in self.list() {
            session.events().prune_before(cutoff);
        }
        self.discard(&expired)
    }
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
    let record = Record {
        id: session.id().to_string(),
        channel: session.channel.clone(),
        key: session.key.clone(),
        mode: session.mode,
        as_of: session.as_of.map(|t| t.to_rfc3339()),
        auth: session.auth.clone(),
        created_at: session.created_at,
        agent: session.pin(),
    };
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

    #[test]
    fn sessions_survive_a_restart_with_their_tokens() {
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
                .unwrap();
            std::fs::write(session.workspace().unwrap().join("f"), "kept").unwrap();
            session.id().to_string()
        };
        let store = store(root.path());
        let bound = store
            .bind(None, Some("slack:T1"), Some(&json!({"user": "ada"})))
            .unwrap();
        assert!(!bound.scratch);
        assert_eq!(bound.session.id(), id);
        assert_eq!(bound.session.mode(), SessionMode::DryRun);
        assert!(bound.session.as_of().is_some());
        assert_eq!(bound.session.pin().map(|p| p.version), Some(3));
        let file = bound.session.workspace().unwrap().join("f");
        assert_eq!(std::fs::read_to_string(file).unwrap(), "kept");
    }

    #[test]
    fn a_record_naming_another_folder_is_skipped_and_never_swept() {
        let root = tempfile::tempdir().unwrap();
        let sessions = root.path().join("sessions");
        let outside = root.path().join("precious");
        std::fs::create_dir_all(&outside).unwrap();
        let id = store(&sessions)
            .create(NewSession::default())
            .unwrap()
            .id()
            .to_string();
        let record = sessions.join(&id).join(RECORD_FILE);
        let text = std::fs::read_to_string(&record).unwrap();
        std::fs::write(&record, text.replace(&id, "../precious")).unwrap();
        let reopened = SessionStore::open(&sessions, Duration::ZERO).unwrap();
        assert!(reopened.list().is_empty(), "the record is skipped");
        reopened.sweep();
        assert!(
            outside.is_dir(),
            "nothing outside the sessions folder is removed"
        );
    }

    #[test]
    fn a_full_store_refuses_one_more_session() {
        let root = tempfile::tempdir().unwrap();
        let store = store(root.path()).with_max_sessions(2);
        for _ in 0..2 {
            store.create(NewSession::default()).unwrap();
        }
        let err = store.create(NewSession::default()).unwrap_err();
        assert!(matches!(err, StoreError::Full { max: 2 }), "{err}");
        assert!(err.to_string().contains("keeps 2 sessions already"));
    }

    #[test]
    fn binding_rules() {
        let root = tempfile::tempdir().unwrap();
        let store = store(root.path());
        let owned = store
            .create(NewSession {
                channel: Some("gh".into()),
                auth: Some(json!({"user": "ada"})),
                ..NewSession::default()
            })
            .unwrap();
        let ada = json!({"user": "ada"});
        let token = owned.continuation_token().unwrap();

        let both = store.bind(Some(owned.id()), Some(&token), Some(&ada));
        assert_eq!(both.unwrap_err().code(), "invalid_continuation_token");
        let bad = store.bind(None, Some("no-colon"), Some(&ada));
        assert_eq!(bad.unwrap_err().code(), "invalid_continuation_token");
        let missing = store.bind(Some("ses_nope"), None, None);
        assert_eq!(missing.unwrap_err().code(), "session_not_found");
        let stranger = store.bind(Some(owned.id()), None, Some(&json!({"user": "bob"})));
        assert_eq!(stranger.unwrap_err().code(), "session_forbidden");

        let by_token = store.bind(None, Some(&token), Some(&ada)).unwrap();
        assert_eq!(by_token.session.id(), owned.id());
        let unmapped = store.bind(None, Some("gh:other"), None).unwrap();
        assert!(unmapped.scratch);
        assert_eq!(unmapped.session.channel(), Some("gh"));
        assert_eq!(unmapped.session.key(), Some("other"));
        assert!(store.bind(None, None, None).unwrap().scratch);
    }

    #[test]
    fn a_token_names_one_session() {
        let root = tempfile::tempdir().unwrap();
        let store = store(root.path());
        let new = || NewSession {
            channel: Some("gh".into()),
            key: Some("42".into()),
            ..NewSession::default()
        };
        store.create(new()).unwrap();
        assert!(matches!(
            store.create(new()),
            Err(StoreError::TokenTaken { .. })
        ));
        let bad = store.create(NewSession {
            channel: Some("a:b".into()),
            ..NewSession::default()
        });
        assert!(matches!(bad, Err(StoreError::Invalid(_))));
    }

    #[test]
    fn idle_sessions_are_swept_with_their_workspace() {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::open(root.path(), Duration::ZERO).unwrap();
        let session = store.create(NewSession::default()).unwrap();
        let dir = session.workspace().unwrap().to_path_buf();
        let held = session.try_write_slot().unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(store.sweep().is_empty(), "a busy session is kept");
        drop(held);
        assert_eq!(store.sweep(), vec![session.id().to_string()]);
        assert!(!dir.exists());
        assert!(store.get(session.id()).is_none());
    }
}
