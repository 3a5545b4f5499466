//! [`SessionBackend`]: where a store keeps its sessions' records, tokens
//! and write slots — this machine's disk ([`LocalSessions`](super::local::LocalSessions))
//! or the fleet's Redis (`super::fleet`). The store keeps what is the same
//! on both: its index of the sessions this server has seen, their
//! folders, reminders and pins; it asks the backend only what differs.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::bind::Lookup;
use super::{Listed, RemoveError, Session, SessionStore, StoreError, Unavailable};

/// Where a store's sessions are recorded. Each method is given the store,
/// whose index it keeps up to date with what it answers.
#[async_trait::async_trait]
pub(super) trait SessionBackend: Send + Sync {
    /// Record `session`, made with its folder `dir`, and index it: refused
    /// when the sessions are at their most or its continuation token is
    /// taken.
    async fn create(
        &self,
        store: &SessionStore,
        session: Session,
        dir: PathBuf,
    ) -> Result<Arc<Session>, StoreError>;

    /// The session `by` names; `touch` marks it active.
    async fn lookup(
        &self,
        store: &SessionStore,
        by: Lookup<'_>,
        touch: bool,
    ) -> Result<Option<Arc<Session>>, Unavailable>;

    /// Record `session` again (its pin changed); an error when it has ended.
    async fn save(&self, store: &SessionStore, session: &Session) -> anyhow::Result<()>;

    /// Whether a write call on another server holds the session `id`'s
    /// write slot.
    async fn busy_elsewhere(&self, id: &str) -> Result<bool, Unavailable>;

    /// End `session`'s record and take it out of the store's index; refused
    /// while a write call holds it.
    async fn end(&self, store: &SessionStore, session: &Session) -> Result<(), RemoveError>;

    /// Every session, with whether a write call holds it.
    async fn list(&self, store: &SessionStore) -> Result<Vec<Listed>, Unavailable>;

    /// Remove the sessions idle since `cutoff`, `idle` being those of this
    /// server's index (already taken out of it): the ids removed.
    async fn sweep(
        &self,
        store: &SessionStore,
        cutoff: DateTime<Utc>,
        idle: Vec<Arc<Session>>,
    ) -> Result<Vec<String>, Unavailable>;

    /// Keep the session `id` at least until `until` plus the retention
    /// period (a reminder is due then).
    async fn keep_until(&self, id: &str, until: DateTime<Utc>) -> Result<(), Unavailable>;

    /// Whether other servers share these sessions.
    fn is_fleet(&self) -> bool;
}
