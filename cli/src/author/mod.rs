//! Tool authoring: `toolhost new` scaffolds a tool project in Rust, Python or
//! TypeScript, and `toolhost build` turns projects into components in a host's
//! `tools/` folder.
//!
//! A project is a folder named by the tool's slug, whose language is told by
//! its files ([`Language::of`]). The language toolchains are the authors'
//! own (cargo, componentize-py, the JS packages) where they have them; else
//! toolhost installs the pinned componentize-py and JS packages into its own
//! cache (`install`). toolhost brings the rest: the WIT package and the
//! SDKs, embedded in the binary and written out once ([`Kit`]).

mod build;
mod install;
mod js;
mod kit;
mod project;
mod python;
mod rust;
mod scaffold;
mod toolchain;

use std::path::PathBuf;

pub use build::{BuildOptions, build};
pub use js::JsEngine;
pub use kit::Kit;
pub use project::{Language, find_projects};
pub use scaffold::scaffold;

/// Why scaffolding or building failed.
#[derive(Debug, thiserror::Error)]
pub enum AuthorError {
    /// A path is not a tool project and holds none.
    #[error(
        "no tool project in {}: a project is a folder with Cargo.toml (Rust), tool.py (Python) or tool.ts / tool.js (TypeScript / JavaScript)",
        .0.display()
    )]
    NoProject(PathBuf),
    /// A project's folder name is not a usable tool name.
    #[error("project {}: {reason}", .dir.display())]
    BadName {
        /// The project folder.
        dir: PathBuf,
        /// Why the name is refused.
        reason: String,
    },
    /// `toolhost new` would overwrite something.
    #[error("{} already exists; pick another name or remove it", .0.display())]
    Exists(PathBuf),
    /// A program the build needs is not installed.
    #[error("{program} was not found ({why}); install it with:\n    {install}")]
    MissingToolchain {
        /// The program looked for.
        program: String,
        /// What it is needed for.
        why: String,
        /// The exact command that installs it.
        install: String,
    },
    /// The language toolchain failed; its own output is in `output`.
    #[error("{tool}: {command} failed ({status}):\n{output}")]
    ToolchainFailed {
        /// The tool being built.
        tool: String,
        /// The command that failed, as typed.
        command: String,
        /// How it ended.
        status: String,
        /// What it printed, as it printed it.
        output: String,
    },
    /// Anything else (I/O on the project or output folders).
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}
