//! [`Source`]: where a host was loaded from, and its config as last read.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use crate::config::Config;

/// A host's directories, and the config a load or reload read.
pub(super) struct Source {
    /// The host directory.
    pub dir: PathBuf,
    /// Where the tools are (`<dir>/tools` unless the builder said).
    pub tools_dir: PathBuf,
    /// Where state is kept (`<dir>/.toolhost` unless the builder said).
    pub state_dir: PathBuf,
    /// The directory tools granted `state` mount at `/state`.
    pub state_root: PathBuf,
    /// The config.
    pub config: RwLock<Arc<Config>>,
    /// The text of `toolhost.toml` the config was read from, if it was.
    pub config_text: RwLock<Option<String>>,
    /// Whether the config comes from `toolhost.toml` (a reload reads it
    /// again) rather than from code.
    pub config_from_file: bool,
    /// Whether every tool is loaded whatever `tools.lock` says.
    pub ignore_lock: bool,
    /// Why the last reload failed, if it did.
    pub reload_error: RwLock<Option<String>>,
}
