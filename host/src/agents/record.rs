//! What a version holds, as recorded: each tool's digests (its `tools.lock`
//! entry) and policy (kept by [`super::shelf`]); and what differs between
//! two versions.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::tools::lock::LockedTool;
use crate::tools::registry::{Origin, Registry, Tool};

/// The most version records kept per agent; the oldest that no session
/// uses are removed past it.
pub const MAX_RECORDS: usize = 1000;

/// One version of an agent's tool set as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionRecord {
    /// The agent.
    pub agent: String,
    /// The version's number, from 1.
    pub version: u64,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// Each tool, by name.
    pub tools: BTreeMap<String, ToolEntry>,
}

/// One tool of a version: where it comes from, its digests and its policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// Where it comes from.
    pub origin: Origin,
    /// Its digests and grants, as `tools.lock` records them.
    pub lock: LockedTool,
    /// How its calls are run.
    pub policy: PolicyEntry,
}

/// A tool's policy as recorded in a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyEntry {
    /// Whether it is listed and callable.
    pub enabled: bool,
    /// `always_allow` or `always_ask`.
    pub permission: crate::config::Permission,
    /// The call's deadline.
    pub timeout_ms: u64,
    /// The linear-memory cap.
    pub memory_bytes: u64,
    /// The largest input.
    pub input_bytes: u64,
    /// The largest result.
    pub output_bytes: u64,
}

impl ToolEntry {
    /// What `tool` is now.
    pub fn of(tool: &Tool) -> Self {
        let policy = tool.policy();
        Self {
            origin: tool.origin(),
            lock: LockedTool::of(tool),
            policy: PolicyEntry {
                enabled: policy.enabled,
                permission: policy.permission,
                timeout_ms: u64::try_from(policy.timeout.as_millis()).unwrap_or(u64::MAX),
                memory_bytes: policy.memory_bytes as u64,
                input_bytes: policy.limits.input_bytes as u64,
                output_bytes: policy.limits.output_bytes as u64,
            },
        }
    }

    /// What changed from `self` to `now`, one phrase per change.
    pub fn changes(&self, now: &ToolEntry) -> Vec<String> {
        let mut changes = self.lock.changes(&now.lock);
        if self.origin != now.origin {
            changes.push(format!("origin {:?} -> {:?}", self.origin, now.origin));
        }
        let (was, is) = (&self.policy, &now.policy);
        let policy: Vec<String> = [
            ("enabled", was.enabled.to_string(), is.enabled.to_string()),
            (
                "permission",
                permission_name(was.permission).to_string(),
                permission_name(is.permission).to_string(),
            ),
            (
                "timeout_ms",
                was.timeout_ms.to_string(),
                is.timeout_ms.to_string(),
            ),
            (
                "memory_bytes",
                was.memory_bytes.to_string(),
                is.memory_bytes.to_string(),
            ),
            (
                "input_bytes",
                was.input_bytes.to_string(),
                is.input_bytes.to_string(),
            ),
            (
                "output_bytes",
                was.output_bytes.to_string(),
                is.output_bytes.to_string(),
            ),
        ]
        .into_iter()
        .filter(|(_, was, is)| was != is)
        .map(|(what, was, is)| format!("{what} {was} -> {is}"))
        .collect();
        if !policy.is_empty() {
            changes.push(format!("policy: {}", policy.join(", ")));
        }
        changes
    }
}

fn permission_name(permission: crate::config::Permission) -> &'static str {
    match permission {
        crate::config::Permission::AlwaysAllow => "always_allow",
        crate::config::Permission::AlwaysAsk => "always_ask",
    }
}

impl VersionRecord {
    /// The record of `registry`'s tools (disabled ones included) as
    /// version `version` of `agent`.
    pub fn of(agent: &str, version: u64, registry: &Registry) -> Self {
        Self {
            agent: agent.to_string(),
            version,
            created_at: Utc::now(),
            tools: registry
                .all()
                .map(|tool| (tool.name().to_string(), ToolEntry::of(tool)))
                .collect(),
        }
    }
}

/// What differs between two versions of an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionDiff {
    /// The version moved from.
    pub from: u64,
    /// The version moved to.
    pub to: u64,
    /// Tools only the newer one has.
    pub added: Vec<String>,
    /// Tools only the older one has.
    pub removed: Vec<String>,
    /// Tools both have that differ, each with what changed.
    pub changed: BTreeMap<String, Vec<String>>,
}

impl VersionDiff {
    /// What changed from `from` to `to`.
    pub fn between(from: &VersionRecord, to: &VersionRecord) -> Self {
        let added = to
            .tools
            .keys()
            .filter(|name| !from.tools.contains_key(*name))
            .cloned()
            .collect();
        let removed = from
            .tools
            .keys()
            .filter(|name| !to.tools.contains_key(*name))
            .cloned()
            .collect();
        let changed = from
            .tools
            .iter()
            .filter_map(|(name, was)| {
                let changes = was.changes(to.tools.get(name)?);
                (!changes.is_empty()).then(|| (name.clone(), changes))
            })
            .collect();
        Self {
            from: from.version,
            to: to.version,
            added,
            removed,
            changed,
        }
    }

    /// Whether the two versions hold the same tools.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}
