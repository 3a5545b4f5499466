//! [`LocalSessions`]: one machine's sessions, each recorded in its folder
//! under the store's root; the store's index is the whole truth.

use super::backend::SessionBackend;
use super::bind::Lookup;
use super::create::{rewrite_record, write_record};
use super::*;

/// The sessions of one machine: records on its disk, tokens and write
/// slots in the store's index.
pub(super) struct LocalSessions;

#[async_trait::async_trait]
impl SessionBackend for LocalSessions {
    async fn create(
        &self,
        store: &SessionStore,
        session: Session,
        dir: PathBuf,
    ) -> Result<Arc<Session>, StoreError> {
        let _creating = store.creating.lock().await;
        let session = Arc::new(session);
        {
            let mut index = store.index.write().unwrap_or_else(PoisonError::into_inner);
            if index.by_id.len() >= store.max_sessions {
                return Err(StoreError::Full {
                    max: store.max_sessions,
                });
            }
            if let Some(token) = session.continuation_token() {
                if let Some(existing) = index.by_token.get(&token) {
                    return Err(StoreError::TokenTaken {
                        token,
                        session: existing.clone(),
                    });
                }
                index.by_token.insert(token, session.id().to_string());
            }
            // Indexed before its record is written, which happens on a
            // blocking thread: a caller that goes meanwhile (a call's
            // deadline) leaves it indexed and written, never written alone.
            index
                .by_id
                .insert(session.id().to_string(), session.clone());
        }
        let writing = Arc::clone(&session);
        let written = crate::blocking::run(move |_| write_record(&dir, &writing))
            .await
            .map_err(anyhow::Error::from)
            .and_then(|written| written);
        if let Err(e) = written {
            store
                .index
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .take(&[session.id().to_string()]);
            return Err(e.into());
        }
        Ok(session)
    }

    async fn lookup(
        &self,
        store: &SessionStore,
        by: Lookup<'_>,
        _touch: bool,
    ) -> Result<Option<Arc<Session>>, Unavailable> {
        Ok(store.local_id(by).and_then(|id| store.get(&id)))
    }

    async fn save(&self, store: &SessionStore, session: &Session) -> anyhow::Result<()> {
        rewrite_record(&store.root.join(session.id()), session)
    }

    async fn busy_elsewhere(&self, _id: &str) -> Result<bool, Unavailable> {
        Ok(false)
    }

    /// Checked again under the index's lock: a call that took the session
    /// since keeps it.
    async fn end(&self, store: &SessionStore, session: &Session) -> Result<(), RemoveError> {
        let mut index = store.index.write().unwrap_or_else(PoisonError::into_inner);
        if session.is_busy() {
            return Err(RemoveError::Busy {
                id: session.id().to_string(),
            });
        }
        index.take(&[session.id().to_string()]);
        Ok(())
    }

    async fn list(&self, store: &SessionStore) -> Result<Vec<Listed>, Unavailable> {
        let index = store.index.read().unwrap_or_else(PoisonError::into_inner);
        Ok(index
            .by_id
            .values()
            .map(|session| Listed {
                busy: session.is_busy(),
                session: session.clone(),
            })
            .collect())
    }

    async fn sweep(
        &self,
        store: &SessionStore,
        _cutoff: DateTime<Utc>,
        idle: Vec<Arc<Session>>,
    ) -> Result<Vec<String>, Unavailable> {
        Ok(store.discard(&idle))
    }

    async fn keep_until(&self, _id: &str, _until: DateTime<Utc>) -> Result<(), Unavailable> {
        Ok(())
    }

    fn is_fleet(&self) -> bool {
        false
    }
}
