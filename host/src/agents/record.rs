//! What a version holds, as recorded: each tool's digests (its `tools.lock`
//! entry) and policy, kept on disk under the state directory so version
//! numbers and their history outlive the process; and what differs between
//! two versions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::inputs::VersionInputs;
use super::shared::SharedAgents;
use crate::lock::LockedTool;
use crate::registry::{Origin, Registry, Tool};

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

/// The version records of one agent, one JSON file each:
/// `<state>/agents/<agent>/versions/<n>.json`, or the fleet's in Redis.
#[derive(Debug, Clone)]
pub(crate) struct RecordShelf {
    dir: PathBuf,
    agent: String,
    shared: Option<Arc<SharedAgents>>,
}

impl RecordShelf {
    /// The shelf of `agent` under the agents directory `root`, or in
    /// `shared`.
    pub(crate) fn new(root: &Path, agent: &str, shared: Option<Arc<SharedAgents>>) -> Self {
        Self {
            dir: root.join(agent).join("versions"),
            agent: agent.to_string(),
            shared,
        }
    }

    /// The number of a new version holding `candidate`'s tools, after
    /// `newest`: the next on one machine; a fleet's number for these
    /// tools (another server may have recorded them).
    pub(crate) fn number_for(
        &self,
        candidate: &VersionRecord,
        newest: Option<&VersionRecord>,
    ) -> anyhow::Result<u64> {
        match &self.shared {
            Some(shared) => shared.number_for(&self.agent, candidate),
            None => Ok(newest.map_or(0, |n| n.version) + 1),
        }
    }

    fn path(&self, version: u64) -> PathBuf {
        self.dir.join(format!("{version}.json"))
    }

    fn inputs_path(&self, version: u64) -> PathBuf {
        self.dir.join(format!("{version}.inputs.json"))
    }

    /// What version `version` was loaded from, if it is kept.
    pub(crate) fn read_inputs(&self, version: u64) -> anyhow::Result<Option<VersionInputs>> {
        if let Some(shared) = &self.shared {
            return shared.inputs(&self.agent, version);
        }
        crate::files::read_json(&self.inputs_path(version), "a version's inputs")
    }

    /// The numbers recorded, lowest first.
    pub(crate) fn numbers(&self) -> anyhow::Result<Vec<u64>> {
        if let Some(shared) = &self.shared {
            return shared.numbers(&self.agent);
        }
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot list {}", self.dir.display()));
            }
        };
        let mut numbers: Vec<u64> = entries
            .filter_map(|entry| {
                let name = entry.ok()?.file_name();
                name.to_str()?.strip_suffix(".json")?.parse().ok()
            })
            .collect();
        numbers.sort_unstable();
        Ok(numbers)
    }

    /// Version `version`'s record, if it is kept.
    pub(crate) fn read(&self, version: u64) -> anyhow::Result<Option<VersionRecord>> {
        if let Some(shared) = &self.shared {
            return shared.record(&self.agent, version);
        }
        crate::files::read_json(&self.path(version), "a version record")
    }

    /// The newest record, if any is kept.
    pub(crate) fn newest(&self) -> anyhow::Result<Option<VersionRecord>> {
        match self.numbers()?.last() {
            Some(&n) => self.read(n),
            None => Ok(None),
        }
    }

    /// Keep `record` and what it was loaded from (durably), then remove
    /// the oldest records past [`MAX_RECORDS`] that `in_use` does not name.
    pub(crate) fn write(
        &self,
        record: &VersionRecord,
        inputs: &VersionInputs,
        in_use: impl Fn(u64) -> bool,
    ) -> anyhow::Result<()> {
        if let Some(shared) = &self.shared {
            shared.keep(record, inputs)?;
            let numbers = self.numbers()?;
            let excess = numbers.len().saturating_sub(MAX_RECORDS);
            let old: Vec<u64> = numbers
                .into_iter()
                .filter(|&n| !in_use(n))
                .take(excess)
                .collect();
            return shared.remove(&self.agent, &old);
        }
        crate::files::create_private_dir(&self.dir)?;
        let inputs_path = self.inputs_path(record.version);
        crate::files::write_atomically(&inputs_path, &serde_json::to_vec(inputs)?)
            .with_context(|| format!("cannot write {}", inputs_path.display()))?;
        let path = self.path(record.version);
        crate::files::write_atomically(&path, &serde_json::to_vec_pretty(record)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        let numbers = self.numbers()?;
        let excess = numbers.len().saturating_sub(MAX_RECORDS);
        for &old in numbers.iter().filter(|&&n| !in_use(n)).take(excess) {
            for path in [self.path(old), self.inputs_path(old)] {
                if let Err(e) = std::fs::remove_file(&path)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    tracing::warn!("cannot remove {}: {e}", path.display());
                }
            }
        }
        Ok(())
    }

    /// The digests of every component file the kept versions' inputs name.
    pub(crate) fn referenced_files(&self) -> anyhow::Result<Vec<String>> {
        let mut files = Vec::new();
        for number in self.numbers()? {
            if let Some(inputs) = self.read_inputs(number)? {
                files.extend(inputs.files.into_values());
            }
        }
        Ok(files)
    }
}
