//! The fleet's sessions: records, tokens and write slots in Redis
//! ([`FleetSessions`]), which every server asks; each server's index holds
//! the sessions it has seen lately, brought up to date at each lookup.

use super::backend::SessionBackend;
use super::bind::Lookup;
use super::*;
use crate::session::fleet_sessions::{Created, ListedRecord, Removal, Stored};

#[async_trait::async_trait]
impl SessionBackend for FleetSessions {
    async fn create(
        &self,
        store: &SessionStore,
        session: Session,
        dir: PathBuf,
    ) -> Result<Arc<Session>, StoreError> {
        std::fs::create_dir_all(dir.join(WORKSPACE_DIR))
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let token = session.continuation_token();
        let record = Record::of(&session);
        let now = session.created_at.timestamp_millis();
        let created =
            FleetSessions::create(self, &record, token.as_deref(), now, store.max_sessions).await;
        let refused = match created {
            Ok(Created::Stored) => None,
            Ok(Created::Full) => Some(StoreError::Full {
                max: store.max_sessions,
            }),
            Ok(Created::TokenTaken(holder)) => Some(StoreError::TokenTaken {
                token: token.unwrap_or_default(),
                session: holder,
            }),
            Err(e) => Some(StoreError::Unavailable(Unavailable(e))),
        };
        if let Some(refused) = refused {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(refused);
        }
        Ok(store.insert(Arc::new(self.share(session))))
    }

    /// Redis is asked, and a session it no longer has (by id) is forgotten
    /// here.
    async fn lookup(
        &self,
        store: &SessionStore,
        by: Lookup<'_>,
        touch: bool,
    ) -> Result<Option<Arc<Session>>, Unavailable> {
        let touch_ms = store.touch_now(touch, store.local_id(by).as_deref());
        let stored = match by {
            Lookup::Id(id) => self.load(id, touch_ms).await,
            Lookup::Token(token) => self.load_by_token(token, touch_ms).await,
        }
        .map_err(Unavailable)?;
        if let (None, Lookup::Id(id)) = (&stored, by) {
            store.forget_here(id);
        }
        Ok(cached(store, self, stored))
    }

    async fn save(&self, _store: &SessionStore, session: &Session) -> anyhow::Result<()> {
        match FleetSessions::save(self, &Record::of(session)).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(anyhow::anyhow!("session `{}` has ended", session.id())),
            Err(e) => Err(anyhow::anyhow!(Unavailable(e))),
        }
    }

    async fn busy_elsewhere(&self, id: &str) -> Result<bool, Unavailable> {
        self.busy(id).await.map_err(Unavailable)
    }

    /// Redis decides: once it has removed the record, a call that took
    /// this server's hold since cannot take the slot beside a record that
    /// is gone.
    async fn end(&self, store: &SessionStore, session: &Session) -> Result<(), RemoveError> {
        let id = session.id().to_string();
        match self.remove(&id).await.map_err(Unavailable)? {
            Removal::Done => {}
            Removal::Busy => return Err(RemoveError::Busy { id }),
            Removal::Missing => return Err(RemoveError::NotFound { id }),
        }
        store.forget_here(&id);
        Ok(())
    }

    async fn list(&self, store: &SessionStore) -> Result<Vec<Listed>, Unavailable> {
        Ok(FleetSessions::list(self)
            .await
            .map_err(Unavailable)?
            .into_iter()
            .filter_map(|ListedRecord { stored, busy }| {
                let session = cached(store, self, Some(stored))?;
                Some(Listed {
                    busy: busy || session.is_busy(),
                    session,
                })
            })
            .collect())
    }

    /// Idle here is not idle everywhere: Redis decides what goes, across
    /// the fleet (each session is removed by one server).
    async fn sweep(
        &self,
        store: &SessionStore,
        cutoff: DateTime<Utc>,
        _idle: Vec<Arc<Session>>,
    ) -> Result<Vec<String>, Unavailable> {
        let removed = FleetSessions::sweep(self, cutoff.timestamp_millis())
            .await
            .map_err(Unavailable)?;
        store
            .index
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take(&removed);
        store.discard_ids(&removed);
        Ok(removed)
    }

    async fn keep_until(&self, id: &str, until: DateTime<Utc>) -> Result<(), Unavailable> {
        FleetSessions::keep_until(self, id, until.timestamp_millis())
            .await
            .map_err(Unavailable)
    }

    fn is_fleet(&self) -> bool {
        true
    }
}

/// The indexed session a record from Redis describes, brought up to date
/// (another server may have moved its version), or indexed now.
fn cached(
    store: &SessionStore,
    shared: &FleetSessions,
    stored: Option<Stored>,
) -> Option<Arc<Session>> {
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
    let session = match store.get(&record.id) {
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
            match store.session_from(record) {
                Ok(session) => store.insert(Arc::new(shared.share(session))),
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
