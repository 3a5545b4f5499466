//! Agent-execution tools in a session's workspace: each one's script
//! written under [`AGENT_TOOLS_DIR`] (executable, with a `<name>.json`
//! beside it holding its description and input schema), so the agent
//! harness can run it next to the checkout: JSON input on stdin, the
//! result on stdout. The host never runs them.

use std::path::Path;

use anyhow::Context as _;
use serde::Serialize;
use serde_json::json;

use crate::tools::registry::Registry;

/// Where, under a session's workspace, the scripts are written.
pub const AGENT_TOOLS_DIR: &str = ".toolhost/agent-tools";

/// Why a host surface refuses a call of the agent-execution tool `name`.
pub fn refusal(name: &str) -> String {
    format!(
        "it is an agent-execution tool (execution = \"agent\"): the agent harness runs its \
         script next to the checkout, never the host. The script is in the session workspace \
         at {AGENT_TOOLS_DIR}/{name} (JSON input on stdin, result on stdout)"
    )
}

/// One script written into a workspace.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WrittenScript {
    /// The tool's name.
    pub name: String,
    /// The script's path, relative to the workspace root.
    pub path: String,
    /// The path of its description and schema, relative to the root.
    pub spec_path: String,
    /// The script's SHA-256, to check before running it (a tool granted
    /// the workspace could have rewritten it).
    pub sha256: String,
    /// Its description.
    pub description: String,
    /// Its input schema.
    pub input_schema: serde_json::Value,
}

/// Write every agent-execution tool of `registry` into `workspace`,
/// replacing what is there (a tool granted the workspace may have changed
/// it), and remove other files from the scripts' folder. Everything is
/// done relative to the workspace's descriptor without following a
/// symlink, so nothing outside the workspace is written, changed or
/// removed whatever the workspace holds.
pub fn write_into(workspace: &Path, registry: &Registry) -> anyhow::Result<Vec<WrittenScript>> {
    let tools: Vec<_> = registry
        .tools()
        .filter_map(|tool| Some((tool, tool.agent_script()?)))
        .collect();
    if tools.is_empty() && !workspace.join(AGENT_TOOLS_DIR).exists() {
        return Ok(Vec::new());
    }
    let dir = beneath::open_dirs(workspace, AGENT_TOOLS_DIR)
        .with_context(|| format!("cannot open {AGENT_TOOLS_DIR} in the workspace"))?;
    let mut written = Vec::with_capacity(tools.len());
    for (tool, script) in tools {
        let name = tool.name();
        let spec = json!({
            "name": name,
            "description": tool.metadata().description,
            "input_schema": tool.metadata().input_schema,
            "sha256": tool.sha256(),
        });
        beneath::replace_file(&dir, name, script.as_bytes(), 0o755)
            .with_context(|| format!("cannot write {AGENT_TOOLS_DIR}/{name}"))?;
        beneath::replace_file(
            &dir,
            &format!("{name}.json"),
            &serde_json::to_vec_pretty(&spec)?,
            0o644,
        )
        .with_context(|| format!("cannot write {AGENT_TOOLS_DIR}/{name}.json"))?;
        written.push(WrittenScript {
            name: name.to_string(),
            path: format!("{AGENT_TOOLS_DIR}/{name}"),
            spec_path: format!("{AGENT_TOOLS_DIR}/{name}.json"),
            sha256: tool.sha256().to_string(),
            description: tool.metadata().description.clone(),
            input_schema: tool.metadata().input_schema.clone(),
        });
    }
    let keep = |file: &str| {
        let name = file.strip_suffix(".json").unwrap_or(file);
        written.iter().any(|w| w.name == name)
    };
    beneath::remove_others(&dir, keep).context("cannot clear old scripts")?;
    Ok(written)
}

/// File operations relative to a directory descriptor that never follow a
/// symlink.
mod beneath {
    use std::os::fd::OwnedFd;
    use std::path::Path;

    use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};

    const DIR_FLAGS: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::CLOEXEC);

    /// Open (creating them) the directories of `relative` under `root`,
    /// each one a real directory beneath the one before.
    pub(super) fn open_dirs(root: &Path, relative: &str) -> std::io::Result<OwnedFd> {
        let mut dir = rustix::fs::open(root, DIR_FLAGS, Mode::empty())?;
        for part in relative.split('/') {
            let open = |dir: &OwnedFd| {
                rustix::fs::openat2(
                    dir,
                    part,
                    DIR_FLAGS | OFlags::NOFOLLOW,
                    Mode::empty(),
                    ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
                )
            };
            let next = match open(&dir) {
                Err(rustix::io::Errno::NOENT) => {
                    match rustix::fs::mkdirat(&dir, part, Mode::from_raw_mode(0o755)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    open(&dir)?
                }
                other => other?,
            };
            dir = next;
        }
        Ok(dir)
    }

    /// Replace the file `name` in `dir` by one holding `bytes` (written to
    /// a fresh name, synced, then renamed over whatever `name` was).
    pub(super) fn replace_file(
        dir: &OwnedFd,
        name: &str,
        bytes: &[u8],
        mode: u32,
    ) -> std::io::Result<()> {
        use std::io::Write as _;
        let temporary = format!(".{name}.{}.tmp", std::process::id());
        let _ = rustix::fs::unlinkat(dir, temporary.as_str(), AtFlags::empty());
        let fd = rustix::fs::openat(
            dir,
            temporary.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )?;
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes)?;
        rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
        file.sync_all()?;
        rustix::fs::renameat(dir, temporary.as_str(), dir, name)?;
        Ok(())
    }

    /// Remove every entry of `dir` that `keep` does not want (a link is
    /// removed as a link; a directory is left, with a warning).
    pub(super) fn remove_others(dir: &OwnedFd, keep: impl Fn(&str) -> bool) -> std::io::Result<()> {
        let mut entries = rustix::fs::Dir::read_from(dir)?;
        let mut unwanted = Vec::new();
        while let Some(entry) = entries.read() {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name != "." && name != ".." && !keep(&name) {
                unwanted.push(name);
            }
        }
        for name in unwanted {
            if let Err(e) = rustix::fs::unlinkat(dir, name.as_str(), AtFlags::empty()) {
                tracing::warn!("cannot remove {name} from the agent tools' folder: {e}");
            }
        }
        Ok(())
    }
}
