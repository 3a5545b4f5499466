//! [`AgentPin`]: which version of which agent a session's calls run, and
//! [`DEFAULT_AGENT`] (a leaf: sessions, envelopes, errors and the config
//! name them).

use serde::{Deserialize, Serialize};

/// The agent a host's tools folder and `toolhost.toml` make.
pub const DEFAULT_AGENT: &str = "default";

/// The agent version a session is bound to: every call in it runs that
/// version's tools until the session is upgraded or ends.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AgentPin {
    /// The agent's name.
    pub name: String,
    /// The version's number, from 1.
    pub version: u64,
}

impl std::fmt::Display for AgentPin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "version {} of agent `{}`", self.version, self.name)
    }
}
