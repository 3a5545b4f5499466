//! An agent made over the HTTP API, as kept (by [`super::definitions`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::caps::http::AllowList;
use crate::config::agent::AgentSpec;

/// An agent made over the API, as kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredAgent {
    /// Its name.
    pub name: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When its definition last changed.
    pub updated_at: DateTime<Utc>,
    /// Its definition ([`AgentSpec::to_stored_json`]).
    pub definition: Value,
}

impl StoredAgent {
    /// Its definition, parsed and checked again, its MCP servers held to
    /// the origins `allowed` lists.
    pub fn spec(&self, allowed: &AllowList) -> anyhow::Result<AgentSpec> {
        match &self.definition {
            Value::Object(body) => AgentSpec::from_json(body, allowed),
            _ => anyhow::bail!("the definition is not a JSON object"),
        }
    }
}
