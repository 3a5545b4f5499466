//! Finding the session a call names (by id or continuation token, here or
//! anywhere in the fleet) and binding the call to it.

use super::*;

impl SessionStore {
    /// The session holding the continuation token `token`, on any server
    /// of the fleet.
    pub async fn by_token(&self, token: &str) -> Result<Option<Arc<Session>>, Unavailable> {
        self.lookup(Lookup::Token(token), false).await
    }

    /// The session with this id, on any server of the fleet.
    pub async fn find(&self, id: &str) -> Result<Option<Arc<Session>>, Unavailable> {
        self.lookup(Lookup::Id(id), false).await
    }

    /// The session `by` names; `touch` marks it active (the backend says
    /// how: [`SessionBackend::lookup`]).
    pub(super) async fn lookup(
        &self,
        by: Lookup<'_>,
        touch: bool,
    ) -> Result<Option<Arc<Session>>, Unavailable> {
        self.backend.lookup(self, by, touch).await
    }

    /// When to mark session `id` active in Redis if `touch` asks to: not
    /// when this server knows it was active within [`TOUCH_EVERY`] (the
    /// sweeps count in retention periods), which spares a call a write.
    pub(super) fn touch_now(&self, touch: bool, id: Option<&str>) -> Option<i64> {
        let now = Utc::now();
        let recent = id
            .and_then(|id| self.get(id))
            .is_some_and(|s| now - s.last_active() < TOUCH_EVERY);
        (touch && !recent).then(|| now.timestamp_millis())
    }

    /// The id of the session `by` names, as this server has it indexed.
    pub(super) fn local_id(&self, by: Lookup<'_>) -> Option<String> {
        match by {
            Lookup::Id(id) => Some(id.to_string()),
            Lookup::Token(token) => {
                let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
                index.by_token.get(token).cloned()
            }
        }
    }

    /// Drop the session `id` from this server's index: another server
    /// removed it.
    pub(super) fn forget_here(&self, id: &str) {
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        index.take(&[id.to_string()]);
    }

    pub(super) fn scratch_session(&self, spec: SessionSpec) -> Bound {
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
}

/// How a request names a session.
#[derive(Clone, Copy)]
pub(super) enum Lookup<'a> {
    /// By its id.
    Id(&'a str),
    /// By its continuation token, `<channel>:<key>`.
    Token(&'a str),
}

fn split_token(token: &str) -> Result<(&str, &str), BindError> {
    match token.split_once(':') {
        Some((channel, key)) if !channel.is_empty() && !key.is_empty() => Ok((channel, key)),
        _ => Err(BindError::InvalidToken {
            reason: format!(
                "{} is not of the form `<channelId>:<key>`",
                crate::shown::quoted(token)
            ),
        }),
    }
}
