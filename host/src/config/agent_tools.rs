//! `[agent_tools.<name>]`: agent-execution tools, the SDK page's
//! `execution: "agent"`. The host never runs one: it lists it (with
//! `"execution": "agent"`), refuses its calls with `tool_not_callable`, and
//! writes its script into each session's workspace for the agent harness to
//! run next to the checkout (JSON input on stdin, result on stdout).
//!
//! ```toml
//! [agent_tools.echo_here]
//! description = "Echo a message from the agent workspace."
//! input_schema = { type = "object", properties = { message = { type = "string" } }, required = ["message"] }
//! script = """#!/usr/bin/env bash
//! set -euo pipefail
//! python3 -c 'import json,sys; print(json.load(sys.stdin)["message"])'
//! """
//! # or: script_file = "scripts/echo_here.sh" (relative to the host directory)
//! ```

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Deserialize;

/// The largest script an agent-execution tool may carry.
pub const MAX_SCRIPT_BYTES: usize = 256 * 1024;

/// An agent-execution tool as declared.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentToolSpec {
    /// Written for the model, as for any tool.
    pub description: String,
    /// A JSON Schema with `type = "object"`.
    pub input_schema: serde_json::Value,
    /// What its calls do, for the harness; `write` when unset.
    #[serde(default)]
    pub effect: Option<crate::tool::Effect>,
    /// The script itself.
    #[serde(default)]
    pub script: Option<String>,
    /// A file holding the script, relative to the host directory (read
    /// into `script` when the config is loaded).
    #[serde(default)]
    pub script_file: Option<PathBuf>,
}

impl AgentToolSpec {
    /// Read `script_file` (relative to `dir`) into `script`, and check that
    /// exactly one of them was given and the script is not too large.
    pub(super) fn resolve(&mut self, name: &str, dir: &Path) -> anyhow::Result<()> {
        let at = format!("[agent_tools.{name}]");
        if let Some(file) = &self.script_file {
            anyhow::ensure!(
                self.script.is_none(),
                "{at}: set `script` or `script_file`, not both"
            );
            let path = dir.join(file);
            let text = read_bounded(&path, MAX_SCRIPT_BYTES)
                .with_context(|| format!("{at} script_file {}", path.display()))?;
            self.script = Some(text);
        }
        let script = self.script.as_deref().with_context(|| {
            format!("{at}: an agent-execution tool needs its `script` (or `script_file`)")
        })?;
        anyhow::ensure!(!script.trim().is_empty(), "{at}: `script` is empty");
        anyhow::ensure!(
            script.len() <= MAX_SCRIPT_BYTES,
            "{at}: `script` is {} bytes; a script may have at most {MAX_SCRIPT_BYTES}",
            script.len()
        );
        Ok(())
    }

    /// The script (present once the config that declares it has loaded).
    pub fn script(&self) -> &str {
        self.script.as_deref().unwrap_or_default()
    }
}

/// Read the text file `path`, refusing one larger than `limit` bytes or
/// one that is not a regular file (a FIFO, a device).
pub(crate) fn read_bounded(path: &Path, limit: usize) -> anyhow::Result<String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).context("cannot open it")?;
    anyhow::ensure!(
        file.metadata().context("cannot read it")?.is_file(),
        "it is not a regular file"
    );
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .context("cannot read it")?;
    anyhow::ensure!(
        bytes.len() <= limit,
        "it is larger than {limit} bytes, the most it may be"
    );
    String::from_utf8(bytes).context("it is not UTF-8 text")
}
