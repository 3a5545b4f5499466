//! Making sessions: on this server's disk, or in the fleet's Redis.

use super::*;

impl SessionStore {
    /// Create a session with its own workspace directory.
    pub async fn create(&self, new: NewSession) -> Result<Arc<Session>, StoreError> {
        let key = match (&new.channel, new.key) {
            (Some(channel), key) => {
                check_token_part("channel", channel)?;
                if channel.contains(':') {
                    return Err(StoreError::Invalid(format!(
                        "channel {} may not contain `:` (it separates channel and key in the \
                         continuation token)",
                        crate::shown::quoted(channel)
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
            credentials: new.credentials,
            workspace: None,
            artifacts: None,
            pin: new.pin.or_else(|| self.default_pin()),
        };
        let session = Session::with_dirs(spec, Dirs::under(&dir), Utc::now(), self.history.clone());
        match &self.shared {
            None => self.create_here(session, dir).await,
            Some(shared) => self.create_shared(shared, session, &dir).await,
        }
    }

    async fn create_here(
        &self,
        session: Session,
        dir: PathBuf,
    ) -> Result<Arc<Session>, StoreError> {
        let _creating = self.creating.lock().await;
        let session = Arc::new(session);
        {
            let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
            if index.by_id.len() >= self.max_sessions {
                return Err(StoreError::Full {
                    max: self.max_sessions,
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
            self.index
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .take(&[session.id().to_string()]);
            return Err(e.into());
        }
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
}

pub(super) fn check_token_part(what: &str, text: &str) -> Result<(), StoreError> {
    if text.is_empty() || text.len() > 256 || text.chars().any(char::is_control) {
        return Err(StoreError::Invalid(format!(
            "{what} {} must be 1 to 256 characters without control characters",
            crate::shown::quoted(text)
        )));
    }
    Ok(())
}

/// Write the record atomically (temporary file, fsync, rename) and make the workspace.
pub(super) fn write_record(dir: &Path, session: &Session) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir.join(WORKSPACE_DIR))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    rewrite_record(dir, session)
}

/// Write the record of a session made before, into its folder: a session
/// ended meanwhile (its folder gone) is not made again.
pub(super) fn rewrite_record(dir: &Path, session: &Session) -> anyhow::Result<()> {
    anyhow::ensure!(dir.is_dir(), "session `{}` has ended", session.id());
    let record = Record::of(session);
    crate::files::write_atomically(&dir.join(RECORD_FILE), &serde_json::to_vec_pretty(&record)?)
        .context("cannot write the session record")
}
