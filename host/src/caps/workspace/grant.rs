//! The grants of the workspace capability: `workspace` and `state` (how
//! much of each directory), and `env` (the environment variables given).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How much of a directory (the session's workspace, the host's state
/// root, the session's artifacts) a tool may touch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DirAccess {
    /// None at all.
    #[default]
    None,
    /// Read-only.
    Read,
    /// Read and write.
    Write,
}

impl std::fmt::Display for DirAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::Read => "read",
            Self::Write => "write",
        })
    }
}

/// The environment variables a tool is given (`env`). Values may be
/// secrets: `Debug` shows only the names, and the lock only digests.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Env(BTreeMap<String, String>);

impl Env {
    /// Each variable's name and value.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0.iter()
    }

    /// How many variables there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The lock's entry: each name with the hex SHA-256 of its value.
    pub fn digests(&self) -> BTreeMap<String, String> {
        self.0
            .iter()
            .map(|(name, value)| (name.clone(), hex::encode(Sha256::digest(value))))
            .collect()
    }
}

impl From<BTreeMap<String, String>> for Env {
    fn from(vars: BTreeMap<String, String>) -> Self {
        Self(vars)
    }
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}
