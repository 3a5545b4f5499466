//! [`Grants`]: what one tool is granted, one field per capability, each of
//! a type its capability's module defines (with its checks and its
//! `tools.lock` entry). The config resolves it from `[tools.<name>]` over
//! `[defaults]`; empty denies everything. [`LockedGrants`] is the same as
//! `tools.lock` records it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::ask::{self, Asked};
use super::http::AllowList;
use super::kv;
use super::reminders::RemindersGrant;
use super::sessions::{Channels, Principals};
use super::workspace::{DirAccess, Env};

/// The capabilities granted to one tool. Empty denies everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grants {
    /// Workspace access.
    pub workspace: DirAccess,
    /// Access to the host's state root.
    pub state: DirAccess,
    /// Environment variables (`Debug` shows their names only).
    pub env: Env,
    /// Access to the session's artifacts.
    pub artifacts: DirAccess,
    /// Whether it may update custom metrics.
    pub metrics: bool,
    /// The channels whose sessions it may look up and send to.
    pub sessions: Channels,
    /// The principals it may send as, besides its call's own.
    pub send_as: Principals,
    /// Whether it may schedule reminders, and which tools they may call.
    pub reminders: Option<RemindersGrant>,
    /// Buckets the tool may open.
    pub kv: Vec<String>,
    /// Where the tool may send HTTP requests (shared with every call's HTTP context).
    pub http: Arc<AllowList>,
    /// Whom it may ask during a call.
    pub ask: BTreeSet<Asked>,
}

impl Grants {
    /// The grants as `tools.lock` records them: each capability's entry.
    pub fn lock_entry(&self) -> LockedGrants {
        LockedGrants {
            workspace: self.workspace,
            state: self.state,
            artifacts: self.artifacts,
            metrics: self.metrics,
            sessions: self.sessions.patterns().to_vec(),
            send_as: self.send_as.patterns().to_vec(),
            reminders: self.reminders.as_ref().map(RemindersGrant::lock_entry),
            kv: kv::lock_entry(&self.kv),
            http: self.http.lock_entry(),
            env: self.env.digests(),
            ask: ask::lock_entry(&self.ask),
        }
    }
}

/// A tool's grants as locked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedGrants {
    /// Workspace access.
    pub workspace: DirAccess,
    /// State-root access (absent when none, as in locks written before it).
    #[serde(default, skip_serializing_if = "is_no_access")]
    pub state: DirAccess,
    /// Artifacts access (absent when none).
    #[serde(default, skip_serializing_if = "is_no_access")]
    pub artifacts: DirAccess,
    /// Whether it may update custom metrics (absent when not).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub metrics: bool,
    /// Channels whose sessions it may reach, sorted (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<String>,
    /// Principals it may send as besides its call's own, sorted (absent
    /// when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub send_as: Vec<String>,
    /// The tools its reminders may call, sorted; absent when it may not
    /// schedule reminders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reminders: Option<Vec<String>>,
    /// Buckets it may open, sorted.
    #[serde(default)]
    pub kv: Vec<String>,
    /// Origins it may reach, canonical (`scheme://host:port`), sorted.
    #[serde(default)]
    pub http: Vec<String>,
    /// Environment variables: name to the hex SHA-256 of the value (values
    /// may be secrets and never stand in the file).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Whom it may ask during a call (`user`, `model`), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ask: Vec<String>,
}

fn is_no_access(access: &DirAccess) -> bool {
    *access == DirAccess::None
}

impl LockedGrants {
    /// The capability diff from `self` to `now`: `+`/`-` per entry.
    pub fn changes(&self, now: &LockedGrants) -> Vec<String> {
        let mut changes = Vec::new();
        for (kind, was, is) in [
            ("workspace", self.workspace, now.workspace),
            ("state", self.state, now.state),
            ("artifacts", self.artifacts, now.artifacts),
        ] {
            if was != is {
                changes.push(format!("{kind} {was} -> {is}"));
            }
        }
        if self.metrics != now.metrics {
            changes.push(format!("metrics {} -> {}", self.metrics, now.metrics));
        }
        if self.reminders != now.reminders {
            let name = |tools: &Option<Vec<String>>| match tools {
                None => "none".to_string(),
                Some(tools) => format!("tools [{}]", tools.join(", ")),
            };
            changes.push(format!(
                "reminders {} -> {}",
                name(&self.reminders),
                name(&now.reminders)
            ));
        }
        for (kind, was, is) in [
            ("sessions", &self.sessions, &now.sessions),
            ("send_as", &self.send_as, &now.send_as),
            ("kv", &self.kv, &now.kv),
            ("http", &self.http, &now.http),
            ("ask", &self.ask, &now.ask),
        ] {
            changes.extend(
                is.iter()
                    .filter(|e| !was.contains(e))
                    .map(|e| format!("+ {kind} {e}")),
            );
            changes.extend(
                was.iter()
                    .filter(|e| !is.contains(e))
                    .map(|e| format!("- {kind} {e}")),
            );
        }
        for (name, value) in &now.env {
            match self.env.get(name) {
                None => changes.push(format!("+ env {name}")),
                Some(old) if old != value => changes.push(format!("env {name} has a new value")),
                Some(_) => {}
            }
        }
        changes.extend(
            self.env
                .keys()
                .filter(|name| !now.env.contains_key(*name))
                .map(|name| format!("- env {name}")),
        );
        changes
    }
}
