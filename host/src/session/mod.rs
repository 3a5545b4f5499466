//! Sessions: identity, workspace, `asOf`, the write slot, and the event trace.
//!
//! A [`Session`] is what a call runs in. [`SessionStore`] keeps the sessions
//! a server hands out, binds requests to them, and forgets idle ones.

mod events;
mod fleet_events;
mod fleet_reminders;
mod fleet_sessions;
mod principal;
mod record;
mod reminder_store;
pub mod reminders;
mod store;
pub mod workspace_files;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{OnceLock, PoisonError, RwLock};

use chrono::{DateTime, FixedOffset, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::MutexGuard;

use crate::redis_store::lease::{Lease, Refused};
use fleet_sessions::FleetSlot;

pub use crate::agent_pin::AgentPin;
pub use events::{
    Event, EventData, EventKind, EventLog, HistoryBudget, MAX_EVENTS, MAX_HISTORY_BYTES,
    MAX_SESSION_HISTORY_BYTES,
};
pub use principal::{
    AUTH_HEADER, Credentials, MAX_AUTH_HEADER_BYTES, MAX_CREDENTIAL_BYTES, MAX_CREDENTIAL_FIELDS,
    VOUCHED_BY, VOUCHED_PRINCIPALS, client_principal, header_principal, principal_id,
    principal_name, principal_only, vouched_name,
};
pub use store::{
    BindError, Bound, Listed, MAX_SESSIONS, NewSession, PinSource, RemoveError, SessionStore,
    StoreError, Unavailable,
};

use crate::error::CallError;

/// Whether a session's calls take effect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionMode {
    /// Calls run for real.
    #[default]
    Live,
    /// Reads run; idempotent and write calls are stubbed.
    DryRun,
}

/// What a new session is made from.
#[derive(Debug, Clone, Default)]
pub struct SessionSpec {
    /// The id; a random one when absent.
    pub id: Option<String>,
    /// The channel the session came from.
    pub channel: Option<String>,
    /// The key within the channel (a thread, a ticket): with the channel it
    /// makes the continuation token `<channel>:<key>`.
    pub key: Option<String>,
    /// Live or dry-run.
    pub mode: SessionMode,
    /// The frozen instant time arguments are bounded by.
    pub as_of: Option<DateTime<FixedOffset>>,
    /// The owner: kept as its principal only (see [`principal_only`]).
    pub auth: Option<Value>,
    /// What its calls present to upstream MCP servers, held in memory only.
    pub credentials: Option<Credentials>,
    /// The workspace directory; a scratch directory, made on first use and
    /// removed with the session, when absent.
    pub workspace: Option<PathBuf>,
    /// Where the session's artifacts are kept; a scratch directory, made on
    /// first use and removed with the session, when absent.
    pub artifacts: Option<PathBuf>,
    /// The agent version its calls run; the host's latest at each call
    /// when absent.
    pub pin: Option<AgentPin>,
}

/// A session: calls in it share a workspace, a write slot and a trace.
#[derive(Debug)]
pub struct Session {
    id: String,
    channel: Option<String>,
    key: Option<String>,
    mode: SessionMode,
    as_of: Option<DateTime<FixedOffset>>,
    auth: Option<Value>,
    credentials: RwLock<Credentials>,
    created_at: DateTime<Utc>,
    last_active: AtomicI64,
    workspace: SessionDir,
    artifacts: SessionDir,
    /// The agent version its calls run (see [`SessionSpec::pin`]).
    pin: RwLock<Option<AgentPin>>,
    /// Held while an artifact is saved: one save at a time counts the
    /// session's artifact bytes.
    artifacts_lock: std::sync::Mutex<()>,
    write_slot: tokio::sync::Mutex<()>,
    /// Set once the session is being ended: no call takes its write slot
    /// again.
    ending: std::sync::atomic::AtomicBool,
    /// The slot's lease in Redis, for a session several servers share.
    shared_slot: Option<FleetSlot>,
    events: EventLog,
}

/// The write slot, held for one idempotent or write call.
#[derive(Debug)]
pub struct WriteSlot<'a> {
    _local: MutexGuard<'a, ()>,
    lease: Option<Lease>,
}

impl WriteSlot<'_> {
    /// Give the slot back now, waiting until Redis has it free for a
    /// shared session (dropping it frees it soon after, in the background:
    /// the caller's next write could find it still taken).
    pub async fn release(self) {
        if let Some(lease) = self.lease {
            lease.release().await;
        }
    }

    /// Give this server's hold back now and, for a shared session, the
    /// lease in the background: the returned task ends once Redis has the
    /// slot free (await it beside other work before answering).
    pub fn release_in_background(self) -> Option<tokio::task::JoinHandle<()>> {
        self.lease.map(|lease| tokio::spawn(lease.release()))
    }

    /// Completes once the slot is lost (a shared session's lease could not
    /// be renewed in time): the call must stop at once, since another
    /// server may take the slot soon. Never completes for a local slot.
    pub async fn lost(&self) {
        match &self.lease {
            Some(lease) => lease.lost().await,
            None => std::future::pending().await,
        }
    }
}

/// How often [`Session::write_slot_free`] looks whether another server
/// still holds a shared session's slot.
const SLOT_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Why the write slot could not be taken.
#[derive(Debug)]
pub enum SlotRefused {
    /// A write call holds it.
    Busy,
    /// The session has ended, or is being ended.
    Ended,
    /// The shared store did not answer: why.
    Unavailable(String),
}

/// A directory of a session's: its workspace, or its artifacts.
#[derive(Debug)]
enum SessionDir {
    /// A directory the session was given; created when missing.
    Fixed(PathBuf),
    /// A folder of a stored session's own, under the store's root (a
    /// fleet's shared folder): created when missing, and used only while
    /// neither it nor the session's folder is a link.
    Stored(PathBuf),
    /// A scratch directory made on first use, removed with the session.
    Scratch(OnceLock<tempfile::TempDir>),
}

impl SessionDir {
    fn given(dir: Option<PathBuf>) -> Self {
        match dir {
            Some(dir) => Self::Fixed(dir),
            None => Self::Scratch(OnceLock::new()),
        }
    }

    /// The directory, created if it is missing (`prefix` names a scratch one).
    fn get(&self, prefix: &str) -> std::io::Result<&Path> {
        match self {
            Self::Fixed(dir) => {
                if !dir.is_dir() {
                    std::fs::create_dir_all(dir)?;
                }
                Ok(dir)
            }
            Self::Stored(dir) => {
                // Only the folder itself: a session ended meanwhile (its
                // own folder gone) is not made again around it.
                if !dir.is_dir() {
                    match std::fs::create_dir(dir) {
                        Err(e)
                            if e.kind() != std::io::ErrorKind::AlreadyExists || !dir.is_dir() =>
                        {
                            return Err(e);
                        }
                        _ => {}
                    }
                }
                for folder in [Some(dir.as_path()), dir.parent()].into_iter().flatten() {
                    if std::fs::symlink_metadata(folder)?.is_symlink() {
                        return Err(std::io::Error::other(format!(
                            "{} is a link: a session's folders never are",
                            folder.display()
                        )));
                    }
                }
                Ok(dir)
            }
            Self::Scratch(cell) => {
                if let Some(dir) = cell.get() {
                    return Ok(dir.path());
                }
                let made = tempfile::Builder::new().prefix(prefix).tempdir()?;
                // A racing call may have made one first; keep theirs.
                Ok(cell.get_or_init(|| made).path())
            }
        }
    }

    /// The directory if it exists already, without creating anything.
    fn path(&self) -> Option<&Path> {
        match self {
            Self::Fixed(dir) | Self::Stored(dir) => Some(dir),
            Self::Scratch(cell) => cell.get().map(tempfile::TempDir::path),
        }
    }
}

/// The directories a session is made with.
pub(crate) struct Dirs {
    workspace: SessionDir,
    artifacts: SessionDir,
}

impl Dirs {
    /// Both under `dir`, a stored session's own directory.
    pub(crate) fn under(dir: &Path) -> Self {
        Self {
            workspace: SessionDir::Stored(dir.join(WORKSPACE_DIR)),
            artifacts: SessionDir::Stored(dir.join(ARTIFACTS_DIR)),
        }
    }

    /// Both scratch directories, made on first use.
    pub(crate) fn scratch() -> Self {
        Self {
            workspace: SessionDir::given(None),
            artifacts: SessionDir::given(None),
        }
    }
}

/// The workspace directory, inside a stored session's directory.
pub(crate) const WORKSPACE_DIR: &str = "workspace";
/// The artifacts directory, inside a stored session's directory.
pub(crate) const ARTIFACTS_DIR: &str = "artifacts";

impl Session {
    /// Open a session; creates a given workspace directory if it does not exist.
    pub fn open(spec: SessionSpec) -> anyhow::Result<Self> {
        for (what, dir) in [
            ("workspace", &spec.workspace),
            ("artifacts", &spec.artifacts),
        ] {
            if let Some(dir) = dir {
                std::fs::create_dir_all(dir)
                    .map_err(|e| anyhow::anyhow!("cannot create {what} {}: {e}", dir.display()))?;
            }
        }
        let dirs = Dirs {
            workspace: SessionDir::given(spec.workspace.clone()),
            artifacts: SessionDir::given(spec.artifacts.clone()),
        };
        Ok(Self::with_dirs(
            spec,
            dirs,
            Utc::now(),
            HistoryBudget::default(),
        ))
    }

    /// A live session with a scratch workspace (made only if a tool uses it).
    pub fn ephemeral() -> anyhow::Result<Self> {
        Self::open(SessionSpec::default())
    }

    fn with_dirs(
        spec: SessionSpec,
        dirs: Dirs,
        created_at: DateTime<Utc>,
        history: HistoryBudget,
    ) -> Self {
        Self {
            id: spec
                .id
                .unwrap_or_else(|| format!("ses_{}", uuid::Uuid::new_v4().simple())),
            channel: spec.channel,
            key: spec.key,
            mode: spec.mode,
            as_of: spec.as_of,
            auth: spec
                .auth
                .as_ref()
                .map(principal_only)
                .filter(|principal| principal.as_object().is_some_and(|p| !p.is_empty())),
            credentials: RwLock::new(spec.credentials.unwrap_or_default()),
            created_at,
            last_active: AtomicI64::new(Utc::now().timestamp_millis()),
            workspace: dirs.workspace,
            artifacts: dirs.artifacts,
            pin: RwLock::new(spec.pin),
            artifacts_lock: std::sync::Mutex::new(()),
            write_slot: tokio::sync::Mutex::new(()),
            ending: std::sync::atomic::AtomicBool::new(false),
            shared_slot: None,
            events: EventLog::with_budget(history),
        }
    }

    /// The same session kept in Redis: its write slot leased there, its
    /// events in a stream there.
    fn shared(mut self, slot: FleetSlot, events: fleet_events::FleetEvents) -> Self {
        self.shared_slot = Some(slot);
        self.events = EventLog::shared(std::sync::Arc::new(events));
        self
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The channel, if any.
    pub fn channel(&self) -> Option<&str> {
        self.channel.as_deref()
    }

    /// The key within the channel, if any.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// `<channel>:<key>`, when the session has both.
    pub fn continuation_token(&self) -> Option<String> {
        Some(format!(
            "{}:{}",
            self.channel.as_deref()?,
            self.key.as_deref()?
        ))
    }

    /// Live or dry-run.
    pub fn mode(&self) -> SessionMode {
        self.mode
    }

    /// The frozen instant, if any.
    pub fn as_of(&self) -> Option<DateTime<FixedOffset>> {
        self.as_of
    }

    /// The owner: its principal only (never credentials).
    pub fn auth(&self) -> Option<&Value> {
        self.auth.as_ref()
    }

    /// What its calls present to upstream MCP servers.
    pub fn credentials(&self) -> Credentials {
        self.credentials
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Present `credentials` from now on (a client brought them again, on
    /// a server that did not have them).
    pub fn set_credentials(&self, credentials: Credentials) {
        *self
            .credentials
            .write()
            .unwrap_or_else(PoisonError::into_inner) = credentials;
    }

    /// The agent version its calls run; `None` for a session that runs
    /// whatever the host serves at each call (a scratch one).
    pub fn pin(&self) -> Option<AgentPin> {
        self.pin
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Bind the session to another agent version (an upgrade; the store
    /// records it).
    pub(crate) fn set_pin(&self, pin: AgentPin) {
        *self.pin.write().unwrap_or_else(PoisonError::into_inner) = Some(pin);
    }

    /// When the session was created.
    pub fn created_at(&self) -> DateTime<Utc> {
        self.created_at
    }

    /// When a call last bound to the session.
    pub fn last_active(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.last_active.load(Ordering::Relaxed))
            .unwrap_or(self.created_at)
    }

    /// Mark the session as used now (it is kept for the retention period after).
    pub fn touch(&self) {
        self.last_active
            .store(Utc::now().timestamp_millis(), Ordering::Relaxed);
    }

    /// Note that the session was active at `ms` (since the epoch) on some
    /// server, if that is later than this server knows.
    pub(crate) fn seen_at(&self, ms: i64) {
        self.last_active.fetch_max(ms, Ordering::Relaxed);
    }

    /// Whether a write call on this server holds the write slot right now
    /// (see `SessionStore::is_busy` for the whole fleet's answer).
    pub fn is_busy(&self) -> bool {
        self.write_slot.try_lock().is_err()
    }

    /// The workspace directory on the host, created if it is missing.
    pub fn workspace(&self) -> std::io::Result<&Path> {
        self.workspace.get("toolhost-ws-")
    }

    /// The workspace path if it exists already, without creating anything.
    pub fn workspace_path(&self) -> Option<&Path> {
        self.workspace.path()
    }

    /// The directory of the session's artifacts, created if it is missing.
    pub fn artifacts(&self) -> std::io::Result<&Path> {
        self.artifacts.get("toolhost-artifacts-")
    }

    /// The artifacts directory if it exists already, without creating it.
    pub fn artifacts_path(&self) -> Option<&Path> {
        self.artifacts.path()
    }

    /// Held while one artifact is saved, so saves count the session's
    /// bytes one at a time.
    pub(crate) fn artifacts_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.artifacts_lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The event trace.
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// The kept events after `after`, then new ones as they are recorded
    /// (on any server, for a session a fleet shares).
    pub fn follow_events(
        self: &std::sync::Arc<Self>,
        after: Option<u64>,
    ) -> futures::stream::BoxStream<'static, Event> {
        EventLog::follow(self.clone(), Self::events, after)
    }

    /// Wait until no write call holds the write slot (another may take it
    /// before the caller does): on this server, then, for a session several
    /// servers share, on any of them (its lease in Redis, looked at every
    /// 100 ms; a Redis that does not answer counts as free, so the
    /// caller's call reports it).
    pub async fn write_slot_free(&self) {
        drop(self.write_slot.lock().await);
        let Some(slot) = &self.shared_slot else {
            return;
        };
        while let Ok(true) = slot.held().await {
            tokio::time::sleep(SLOT_POLL).await;
        }
    }

    /// Take the write slot for one call, or fail at once: on this server,
    /// and for a session several servers share, its lease in Redis too.
    pub async fn write_slot(&self) -> Result<WriteSlot<'_>, SlotRefused> {
        if self.ending.load(Ordering::Relaxed) {
            return Err(SlotRefused::Ended);
        }
        let local = self.write_slot.try_lock().map_err(|_| SlotRefused::Busy)?;
        let lease = match &self.shared_slot {
            None => None,
            Some(slot) => Some(
                slot.take()
                    .await
                    .map_err(SlotRefused::Unavailable)?
                    .map_err(|refused| match refused {
                        Refused::Held => SlotRefused::Busy,
                        Refused::Missing => SlotRefused::Ended,
                    })?,
            ),
        };
        Ok(WriteSlot {
            _local: local,
            lease,
        })
    }

    /// Mark the session as being ended: from now on no call takes its
    /// write slot (they answer `session_not_found`), so the calls running
    /// in it can be ended and it removed without another taking their
    /// place.
    pub fn end(&self) {
        self.ending.store(true, Ordering::Relaxed);
    }

    /// Take calls again after [`Session::end`]: it could not be ended.
    pub fn keep(&self) {
        self.ending.store(false, Ordering::Relaxed);
    }

    /// Take this server's hold of the write slot, or fail at once with
    /// `session_busy` (tests; calls take [`Session::write_slot`]).
    pub fn try_write_slot(&self) -> Result<MutexGuard<'_, ()>, CallError> {
        self.write_slot
            .try_lock()
            .map_err(|_| CallError::SessionBusy {
                session: self.id.clone(),
            })
    }

    /// Whether `caller` may use this session: a session whose auth names a
    /// principal accepts only callers naming the same one.
    pub fn admits(&self, caller: Option<&Value>) -> bool {
        match self.auth.as_ref().and_then(principal_id) {
            None => true,
            Some(owner) => caller.and_then(principal_id) == Some(owner),
        }
    }
}

/// The longest instant [`parse_instant`] reads, in bytes.
pub const MAX_INSTANT_BYTES: usize = 64;

/// Parse an absolute ISO-8601 (RFC 3339) instant that carries a timezone.
pub fn parse_instant(text: &str) -> Result<DateTime<FixedOffset>, String> {
    let shown = crate::shown::quoted(text);
    if text.len() > MAX_INSTANT_BYTES {
        return Err(format!(
            "{shown} is not an absolute ISO-8601 instant: it is {} bytes, at most \
             {MAX_INSTANT_BYTES} are",
            text.len()
        ));
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t);
    }
    let naive = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f"));
    if naive.is_ok() || chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok() {
        return Err(format!(
            "{shown} has no timezone: add `Z` or an offset such as `+02:00`"
        ));
    }
    Err(format!(
        "{shown} is not an absolute ISO-8601 instant (expected e.g. \"2026-01-31T12:00:00Z\")"
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_principal_of_an_auth_is_passed_on() {
        let auth = serde_json::json!({"type": "slack", "user": "ada", "token": "s3cret", "id": 7});
        assert_eq!(
            super::principal_only(&auth),
            serde_json::json!({"type": "slack", "user": "ada"})
        );
        let mcp = serde_json::json!({"principal": "user of c", "via": "mcp-elicitation"});
        assert_eq!(super::principal_only(&mcp), mcp);
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn instants_need_a_timezone() {
        assert!(parse_instant("2026-01-31T12:00:00Z").is_ok());
        assert!(parse_instant("2026-01-31T12:00:00.5+02:00").is_ok());
        let err = parse_instant("2026-01-31T12:00:00").unwrap_err();
        assert!(err.contains("no timezone"), "{err}");
        let err = parse_instant("2026-01-31").unwrap_err();
        assert!(err.contains("no timezone"), "{err}");
        let err = parse_instant("now-1h").unwrap_err();
        assert!(err.contains("not an absolute"), "{err}");
    }

    #[test]
    fn write_slot_is_exclusive() {
        let session = Session::ephemeral().unwrap();
        let held = session.try_write_slot().unwrap();
        assert!(session.is_busy());
        assert!(matches!(
            session.try_write_slot(),
            Err(CallError::SessionBusy { .. })
        ));
        drop(held);
        assert!(session.try_write_slot().is_ok());
    }

    #[test]
    fn scratch_workspace_is_made_on_use_and_removed_with_the_session() {
        let session = Session::ephemeral().unwrap();
        assert!(session.workspace_path().is_none(), "nothing made up front");
        let dir = session.workspace().unwrap().to_path_buf();
        assert!(dir.is_dir());
        assert_eq!(session.workspace().unwrap(), dir, "made once");
        drop(session);
        assert!(!dir.exists());
    }

    #[test]
    fn owners_are_matched_by_principal() {
        let owned = Session::open(SessionSpec {
            auth: Some(json!({"user": "ada", "token": "secret"})),
            ..SessionSpec::default()
        })
        .unwrap();
        assert!(owned.admits(Some(&json!({"user": "ada", "token": "other"}))));
        assert!(!owned.admits(Some(&json!({"user": "bob"}))));
        assert!(!owned.admits(None));
        let open = Session::ephemeral().unwrap();
        assert!(open.admits(None));
        assert!(open.admits(Some(&json!({"user": "bob"}))));
        assert_eq!(principal_name(&json!({"email": "a@b"})), "`a@b`");
        assert_eq!(
            principal_name(&json!({"token": "x"})),
            "an unnamed principal"
        );
    }
}
