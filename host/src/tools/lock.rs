//! `tools.lock`: what each tool was when the operator last reviewed it.
//!
//! `toolhost lock` records, per tool, the SHA-256 of its component, hashes
//! of its metadata (description and schemas; effect, time arguments and
//! dry-run support as they are) and the capabilities it is granted. While the
//! file exists the host refuses any tool that differs from its entry, or has
//! none, and says what changed, so a tool cannot silently change under its
//! users; running `toolhost lock` again accepts the change.
//!
//! An MCP server's tool has no component: its entry names the server and
//! hashes the annotations the server gave it, so a server that changes a
//! tool's description, schemas or annotations ("rug pull") has it refused.
//!
//! ```toml
//! version = 1
//!
//! [tools.fetch_url]
//! component = "3fa4…"
//! metadata = { description = "9c1e…", input_schema = "…", effect = "read", time_args = [], dry_run = false }
//! grants = { workspace = "none", kv = [], http = ["https://example.com:443"], env = {} }
//!
//! [tools.lookup]
//! mcp = { server = "tickets", annotations = "5d2a…" }
//! metadata = { description = "77b0…", input_schema = "…", effect = "read", time_args = [], dry_run = false }
//! grants = { workspace = "none", kv = [], http = [], env = {} }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::caps::grants::LockedGrants;
use crate::sandbox::engine::{ContentGate, Pins};
use crate::tools::registry::{LoadFailure, Registry, Tool};

/// The file name of the lock, beside `toolhost.toml`.
pub const LOCK_FILE: &str = "tools.lock";
/// The format written.
const VERSION: u32 = 1;

/// A whole `tools.lock`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    /// The format, 1.
    pub version: u32,
    /// Each locked tool, by name.
    #[serde(default)]
    pub tools: BTreeMap<String, LockedTool>,
}

/// What one tool was when locked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedTool {
    /// Hex SHA-256 of the component; absent for a custom tool and an MCP
    /// server's tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    /// For an MCP server's tool: the server and its annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<LockedUpstream>,
    /// The metadata, hashed where it is long.
    pub metadata: LockedMetadata,
    /// The capabilities granted.
    pub grants: LockedGrants,
}

/// What an MCP server's tool was, beside its metadata, when locked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedUpstream {
    /// The `[[mcp_servers]]` entry that serves it.
    pub server: String,
    /// Hex SHA-256 of its annotations (as JSON).
    pub annotations: String,
}

/// A tool's metadata as locked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedMetadata {
    /// Hex SHA-256 of the description.
    pub description: String,
    /// Hex SHA-256 of the input schema (as JSON).
    pub input_schema: String,
    /// Hex SHA-256 of the output schema, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<String>,
    /// The effect declaration (`read`, `idempotent`, `write`, `by-input`).
    pub effect: String,
    /// The time arguments.
    #[serde(default)]
    pub time_args: Vec<String>,
    /// Whether the tool supplies its own dry-run result.
    #[serde(default)]
    pub dry_run: bool,
}

impl LockedTool {
    /// What `tool` is now.
    pub fn of(tool: &Tool) -> Self {
        let meta = tool.metadata();
        let grants = &tool.policy().grants;
        let mcp = tool.upstream().map(|server| LockedUpstream {
            server: server.spec().name.clone(),
            annotations: tool.annotations_sha256().unwrap_or_default().to_string(),
        });
        Self {
            component: (!tool.is_custom() && mcp.is_none()).then(|| tool.sha256().to_string()),
            mcp,
            metadata: LockedMetadata {
                description: sha256(meta.description.as_bytes()),
                input_schema: sha256(meta.input_schema.to_string().as_bytes()),
                output_schema: meta
                    .output_schema
                    .as_ref()
                    .map(|s| sha256(s.to_string().as_bytes())),
                effect: meta.effect.to_string(),
                time_args: meta.time_args.clone(),
                dry_run: meta.has_dry_run_result,
            },
            grants: grants.lock_entry(),
        }
    }

    /// What changed from `self` (locked) to `now`, one phrase per change;
    /// empty when they match.
    pub fn changes(&self, now: &LockedTool) -> Vec<String> {
        let mut changes = Vec::new();
        if self.component != now.component {
            changes.push(format!(
                "component sha256 {} -> {}",
                short(self.component.as_deref()),
                short(now.component.as_deref())
            ));
        }
        match (&self.mcp, &now.mcp) {
            (Some(was), Some(is)) if was.server != is.server => {
                changes.push(format!("MCP server `{}` -> `{}`", was.server, is.server))
            }
            (None, Some(is)) => changes.push(format!("now served by MCP server `{}`", is.server)),
            (Some(was), None) => {
                changes.push(format!("no longer served by MCP server `{}`", was.server));
            }
            _ => {}
        }
        let (was, is) = (&self.metadata, &now.metadata);
        let mut parts = Vec::new();
        let annotations = |lock: &LockedTool| lock.mcp.as_ref().map(|m| m.annotations.clone());
        if self.mcp.is_some() && now.mcp.is_some() && annotations(self) != annotations(now) {
            parts.push("annotations".to_string());
        }
        if was.description != is.description {
            parts.push("description".to_string());
        }
        if was.input_schema != is.input_schema {
            parts.push("input schema".to_string());
        }
        if was.output_schema != is.output_schema {
            parts.push("output schema".to_string());
        }
        if was.effect != is.effect {
            parts.push(format!("effect {} -> {}", was.effect, is.effect));
        }
        if was.time_args != is.time_args {
            parts.push(format!(
                "time arguments [{}] -> [{}]",
                was.time_args.join(", "),
                is.time_args.join(", ")
            ));
        }
        if was.dry_run != is.dry_run {
            parts.push(format!("dry-run result {} -> {}", was.dry_run, is.dry_run));
        }
        if !parts.is_empty() {
            changes.push(format!("metadata: {}", parts.join(", ")));
        }
        let grants = self.grants.changes(&now.grants);
        if !grants.is_empty() {
            changes.push(format!("grants: {}", grants.join("; ")));
        }
        changes
    }
}

impl Lockfile {
    /// The lock of `tools`, as they are now.
    pub fn of<'a>(tools: impl IntoIterator<Item = &'a Tool>) -> Self {
        Self {
            version: VERSION,
            tools: tools
                .into_iter()
                .map(|tool| (tool.name().to_string(), LockedTool::of(tool)))
                .collect(),
        }
    }

    /// The lock file of a host directory.
    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(LOCK_FILE)
    }

    /// Read `<dir>/tools.lock`; `None` when there is none.
    pub fn load(dir: &Path) -> anyhow::Result<Option<Self>> {
        let path = Self::path_in(dir);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let lock: Self = toml::from_str(&text).with_context(|| {
            format!(
                "invalid {} (run `toolhost lock` to write it again)",
                path.display()
            )
        })?;
        anyhow::ensure!(
            lock.version == VERSION,
            "{} has version {}; this toolhost reads version {VERSION} (run `toolhost lock` \
             to write it again)",
            path.display(),
            lock.version
        );
        Ok(Some(lock))
    }

    /// Write `<dir>/tools.lock` whole: a temporary file, fsynced, renamed.
    pub fn write(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        let path = Self::path_in(dir);
        let text = format!(
            "# Written by `toolhost lock`: what each tool was when it was last reviewed.\n\
             # The host refuses a tool that differs from its entry; run `toolhost lock`\n\
             # again to accept a change.\n\n{}",
            toml::to_string(self).context("cannot encode the lock")?
        );
        crate::files::write_atomically(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }

    /// Why `tool` may not run under this lock, or `None` if it matches.
    pub fn refusal(&self, tool: &Tool) -> Option<String> {
        let name = tool.name();
        let Some(locked) = self.tools.get(name) else {
            return Some(format!(
                "`{name}` is not in {LOCK_FILE} (added after `toolhost lock` ran); review it \
                 with `toolhost inspect {name}`, then run `toolhost lock` to accept it"
            ));
        };
        let changes = locked.changes(&LockedTool::of(tool));
        (!changes.is_empty()).then(|| {
            format!(
                "`{name}` differs from {LOCK_FILE}: {}; review it with `toolhost inspect \
                 {name}`, then run `toolhost lock` to accept the change",
                changes.join("; ")
            )
        })
    }

    /// Refuse every tool of `registry` that differs from this lock (or has
    /// no entry in it): it becomes a load failure saying what changed.
    pub fn enforce(&self, registry: &mut Registry) {
        registry.refuse(|tool| self.refusal(tool));
    }

    /// Refuse, as [`Lockfile::enforce`] does, only the tools of `registry`
    /// loaded from the tools folder: a named agent's own toolset, custom
    /// and MCP tools are pinned by its versions, not by this lock.
    pub fn enforce_files(&self, registry: &mut Registry) {
        registry.refuse(|tool| {
            (tool.origin() == crate::tools::registry::Origin::File)
                .then(|| self.refusal(tool))
                .flatten()
        });
    }

    /// Whether `tool` matches this lock.
    pub fn accepts(&self, tool: &Tool) -> bool {
        self.refusal(tool).is_none()
    }

    /// The lock `toolhost lock` writes for `registry`: every loaded tool as
    /// it is now, and for a tool that failed to load, its entry in
    /// `previous` kept as it was. Also the failures whose entries were kept
    /// (the rest are not locked).
    pub fn merged<'a>(
        registry: &'a Registry,
        previous: Option<&Lockfile>,
    ) -> (Self, Vec<(&'a LoadFailure, bool)>) {
        let mut next = Self::of(registry.all().map(|t| &**t));
        let failures = registry
            .failures()
            .iter()
            .map(|failure| {
                let kept = failure
                    .tool
                    .as_ref()
                    .and_then(|name| Some((name, previous?.tools.get(name)?)));
                if let Some((name, entry)) = kept {
                    next.tools.insert(name.clone(), entry.clone());
                }
                (failure, kept.is_some())
            })
            .collect();
        (next, failures)
    }

    /// What a file of this slug must hash to before it is compiled or run:
    /// the components locked for the tool of that name, or for the
    /// functions of a plain component of that name (`<slug>_<function>`).
    pub fn file_gate(&self, slug: &str) -> FileGate {
        let prefix = format!("{slug}_");
        let locked = self
            .tools
            .iter()
            .filter(|(name, _)| *name == slug || name.starts_with(&prefix))
            .filter_map(|(_, tool)| tool.component.clone())
            .collect();
        FileGate {
            slug: slug.to_string(),
            locked,
        }
    }

    /// What changed from `self` (the lock on disk) to `next`, a line per tool.
    pub fn diff(&self, next: &Lockfile) -> Vec<String> {
        let mut lines = Vec::new();
        for (name, tool) in &next.tools {
            match self.tools.get(name) {
                None => lines.push(format!("+ {name}")),
                Some(old) => {
                    let changes = old.changes(tool);
                    if !changes.is_empty() {
                        lines.push(format!("~ {name}: {}", changes.join("; ")));
                    }
                }
            }
        }
        lines.extend(
            self.tools
                .keys()
                .filter(|name| !next.tools.contains_key(*name))
                .map(|name| format!("- {name}")),
        );
        lines
    }
}

impl Pins for Lockfile {
    fn gate(&self, slug: &str) -> ContentGate {
        let gate = self.file_gate(slug);
        Box::new(move |sha256: &str| gate.check(sha256))
    }
}

/// The hashes a tool file may have under a lock, checked before the file is
/// compiled or any of its code runs.
#[derive(Debug, Clone)]
pub struct FileGate {
    slug: String,
    locked: Vec<String>,
}

impl FileGate {
    /// Whether a file hashing to `sha256` may be compiled and run; why not.
    pub fn check(&self, sha256: &str) -> Result<(), String> {
        let name = &self.slug;
        let review = format!(
            "it was neither compiled nor run; review it with `toolhost inspect {name}`, then \
             run `toolhost lock`"
        );
        match self.locked.as_slice() {
            [] => Err(format!(
                "`{name}` is not in {LOCK_FILE} (added after `toolhost lock` ran); {review} to accept it"
            )),
            locked if locked.iter().any(|l| l == sha256) => Ok(()),
            [first, ..] => Err(format!(
                "`{name}` differs from {LOCK_FILE}: component sha256 {} -> {}; {review} to \
                 accept the change",
                short(Some(first)),
                short(Some(sha256)),
            )),
        }
    }
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The first 12 hex digits of a hash, or `none`.
fn short(hash: Option<&str>) -> String {
    hash.map_or_else(|| "none".to_string(), |h| h.chars().take(12).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::workspace::DirAccess;

    #[test]
    fn a_file_passes_the_gate_only_with_a_hash_locked_for_its_name_or_functions() {
        let mut lock = Lockfile::default();
        let plain = LockedTool {
            component: Some("b".repeat(64)),
            ..tool()
        };
        lock.tools.insert("echo".into(), tool());
        lock.tools.insert("git_push".into(), plain);
        assert!(lock.file_gate("echo").check(&"a".repeat(64)).is_ok());
        assert!(
            lock.file_gate("git").check(&"b".repeat(64)).is_ok(),
            "a plain component's functions"
        );
        let changed = lock.file_gate("echo").check(&"c".repeat(64)).unwrap_err();
        assert!(
            changed.contains("component sha256 aaaaaaaaaaaa -> cccccccccccc"),
            "{changed}"
        );
        let added = lock.file_gate("notes").check(&"a".repeat(64)).unwrap_err();
        assert!(added.contains("not in tools.lock"), "{added}");
        assert!(
            lock.file_gate("ech").check(&"a".repeat(64)).is_err(),
            "no prefix match"
        );
    }

    fn tool() -> LockedTool {
        LockedTool {
            component: Some("a".repeat(64)),
            mcp: None,
            metadata: LockedMetadata {
                description: "d".into(),
                input_schema: "i".into(),
                output_schema: None,
                effect: "read".into(),
                time_args: vec![],
                dry_run: false,
            },
            grants: LockedGrants {
                workspace: DirAccess::Read,
                state: DirAccess::None,
                artifacts: DirAccess::None,
                metrics: false,
                sessions: Vec::new(),
                send_as: Vec::new(),
                reminders: None,
                kv: vec!["cache".into()],
                http: vec!["https://example.com:443".into()],
                env: BTreeMap::from([("TOKEN".into(), "t1".into())]),
                ask: vec![],
            },
        }
    }

    #[test]
    fn identical_entries_have_no_changes() {
        assert!(tool().changes(&tool()).is_empty());
    }

    #[test]
    fn each_part_names_its_change() {
        let mut now = tool();
        now.component = Some("b".repeat(64));
        now.metadata.description = "other".into();
        now.metadata.effect = "write".into();
        now.grants.workspace = DirAccess::Write;
        now.grants.state = DirAccess::Read;
        now.grants.kv = vec![];
        now.grants.http.push("https://evil.example:443".into());
        now.grants.env.insert("TOKEN".into(), "t2".into());
        now.grants.env.insert("EXTRA".into(), "x".into());
        now.grants.ask.push("model".into());
        assert_eq!(
            tool().changes(&now),
            [
                format!("component sha256 {} -> {}", "a".repeat(12), "b".repeat(12)),
                "metadata: description, effect read -> write".to_string(),
                "grants: workspace read -> write; state none -> read; - kv cache; + http https://evil.example:443; \
                 + ask model; + env EXTRA; env TOKEN has a new value"
                    .to_string(),
            ]
        );
    }

    #[test]
    fn the_file_round_trips_and_diffs() {
        let lock = Lockfile {
            version: VERSION,
            tools: BTreeMap::from([("echo".to_string(), tool())]),
        };
        let text = toml::to_string(&lock).unwrap();
        assert_eq!(toml::from_str::<Lockfile>(&text).unwrap(), lock);
        let mut next = lock.clone();
        next.tools.insert("new".into(), tool());
        next.tools.get_mut("echo").unwrap().metadata.dry_run = true;
        assert_eq!(
            lock.diff(&next),
            ["~ echo: metadata: dry-run result false -> true", "+ new"]
        );
        assert_eq!(next.diff(&lock)[1], "- new");
    }
}
