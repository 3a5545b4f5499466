//! Making sessions: checking what a new session names, then recording it
//! where the store's backend keeps them.

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
        self.backend.create(self, session, dir).await
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
