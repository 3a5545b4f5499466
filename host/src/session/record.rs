//! A session's record: what `session.json` holds on one machine, and the
//! value of its key in Redis for a fleet.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AgentPin, Session, SessionMode};

/// A session's record: its `session.json`, or its value in Redis.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Record {
    /// The session id.
    pub(super) id: String,
    /// Its channel.
    pub(super) channel: Option<String>,
    /// Its key within the channel.
    pub(super) key: Option<String>,
    /// Live or dry-run.
    pub(super) mode: SessionMode,
    /// Its `asOf`, as RFC 3339.
    pub(super) as_of: Option<String>,
    /// Its owner's auth.
    pub(super) auth: Option<Value>,
    /// When it was created.
    pub(super) created_at: DateTime<Utc>,
    /// The agent version it is bound to; absent in records written before
    /// sessions kept a version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) agent: Option<AgentPin>,
}

impl Record {
    /// The record of `session` as it is now.
    pub(super) fn of(session: &Session) -> Self {
        Self {
            id: session.id().to_string(),
            channel: session.channel.clone(),
            key: session.key.clone(),
            mode: session.mode,
            as_of: session.as_of.map(|t| t.to_rfc3339()),
            auth: session.auth.clone(),
            created_at: session.created_at,
            agent: session.pin(),
        }
    }
}
