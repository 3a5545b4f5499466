//! One module per command: its own arguments and its handler. What several
//! commands share is here.

pub(crate) mod author;
pub(crate) mod call;
pub(crate) mod check;
pub(crate) mod hard_stop;
pub(crate) mod inspect;
pub(crate) mod list;
pub(crate) mod lock;
pub(crate) mod publish;
pub(crate) mod serve;
pub(crate) mod sign;
pub(crate) mod sources;

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{Value, json};
use toolhost::Host;
use toolhost::config::Permission;
use toolhost::registry::{Origin, Tool};

/// The host directory a command works on.
#[derive(Debug, Args)]
pub(crate) struct DirArgs {
    /// The host directory: `toolhost.toml` and `tools/`.
    #[arg(long, short = 'd', default_value = ".")]
    pub(crate) dir: PathBuf,
}

/// An engine for loading single files of the host directory `dir` under
/// its `config` (a one-shot command's, sharing the folder's compile cache).
pub(crate) fn file_engine(
    dir: &Path,
    config: &toolhost::config::Config,
) -> anyhow::Result<toolhost::engine::ToolEngine> {
    toolhost::engine::ToolEngine::new(&toolhost::engine::EngineOptions {
        max_memory_bytes: config.max_memory_bytes(),
        max_instances: 4,
        cache_dir: dir.join(toolhost::host::STATE_DIR).join("cache"),
        cache_max_bytes: config.limits.compile_cache_bytes(),
        shared_cache: config.state.shared_compile_cache()?,
    })
}

/// Load the host directory for a one-shot command.
pub(crate) async fn load(dir: &Path) -> anyhow::Result<Host> {
    Host::builder(dir).build().await
}

/// Print each file that did not load, as a warning.
pub(crate) fn warn_failures(host: &Host) {
    for failure in host.registry().failures() {
        eprintln!("warning: not loaded: {failure}");
    }
}

pub(crate) fn cli_principal() -> Value {
    let user = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    json!({ "type": "cli", "user": user })
}

/// Where a tool comes from, as listings show it: its file's name, `toolset`,
/// `toolhost.toml` (a custom tool) or `mcp:<server>`.
pub(crate) fn source_name(tool: &Tool) -> String {
    match tool.origin() {
        Origin::File => tool.path().file_name().map_or_else(
            || tool.path().display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        Origin::Toolset => "toolset".to_string(),
        Origin::Custom | Origin::Agent | Origin::Mcp => tool.path().display().to_string(),
    }
}

/// A permission as `toolhost.toml` spells it.
pub(crate) fn permission_name(permission: Permission) -> &'static str {
    match permission {
        Permission::AlwaysAllow => "always_allow",
        Permission::AlwaysAsk => "always_ask",
    }
}
