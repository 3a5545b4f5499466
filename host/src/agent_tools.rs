//! Agent-execution tools in a session's workspace: each one's script
//! written under [`AGENT_TOOLS_DIR`] (executable, with a `<name>.json`
//! beside it holding its description and input schema), so the agent
//! harness can run it next to the checkout: JSON input on stdin, the
//! result on stdout. The host never runs them.

use std::path::Path;

use anyhow::Context as _;
use serde::Serialize;
use serde_json::json;

use crate::registry::Registry;

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
/// replacing what differs, and remove scripts of tools it no longer has.
pub fn write_into(workspace: &Path, registry: &Registry) -> anyhow::Result<Vec<WrittenScript>> {
    let dir = workspace.join(AGENT_TOOLS_DIR);
    let tools: Vec<_> = registry
        .tools()
        .filter_map(|tool| Some((tool, tool.agent_script()?)))
        .collect();
    if tools.is_empty() && !dir.exists() {
        return Ok(Vec::new());
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::with_capacity(tools.len());
    for (tool, script) in tools {
        let name = tool.name();
        let script_path = dir.join(name);
        let spec_path = dir.join(format!("{name}.json"));
        if std::fs::read(&script_path).ok().as_deref() != Some(script.as_bytes()) {
            crate::files::write_atomically(&script_path, script.as_bytes())?;
        }
        make_executable(&script_path)?;
        let spec = json!({
            "name": name,
            "description": tool.metadata().description,
            "input_schema": tool.metadata().input_schema,
            "sha256": tool.sha256(),
        });
        crate::files::write_atomically(&spec_path, &serde_json::to_vec_pretty(&spec)?)?;
        written.push(WrittenScript {
            name: name.to_string(),
            path: format!("{AGENT_TOOLS_DIR}/{name}"),
            spec_path: format!("{AGENT_TOOLS_DIR}/{name}.json"),
            sha256: tool.sha256().to_string(),
            description: tool.metadata().description.clone(),
            input_schema: tool.metadata().input_schema.clone(),
        });
    }
    remove_others(&dir, &written)?;
    Ok(written)
}

/// Remove the files of tools no longer in `kept`.
fn remove_others(dir: &Path, kept: &[WrittenScript]) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries.flatten() {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        let name = file.strip_suffix(".json").unwrap_or(&file);
        if !kept.iter().any(|k| k.name == name) {
            crate::files::remove_durably(&entry.path())
                .with_context(|| format!("cannot remove {}", entry.path().display()))?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn make_executable(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> anyhow::Result<()> {
    Ok(())
}
