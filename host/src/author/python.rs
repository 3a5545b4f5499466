//! Building a Python tool: `componentize-py` over the project and the SDK.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::project::Project;
use super::toolchain::{self, Program, upward};
use super::{AuthorError, Kit};

/// The version the SDK is written and tested against.
const COMPONENTIZE_PY: Program<'static> = Program {
    name: "componentize-py",
    why: "it builds Python tools",
    install: "pip install componentize-py==0.25.1",
};

/// The SDK module componentize-py starts from: it imports the author's
/// `tool` module and exports what it declared.
const ENTRY: &str = "toolhost.component";

/// Builds `project` into a component in `scratch` and returns its path.
pub(super) fn build(project: &Project, kit: &Kit, scratch: &Path) -> Result<PathBuf, AuthorError> {
    let program = COMPONENTIZE_PY.find(&upward(&project.dir, ".venv/bin"))?;
    let out = scratch.join(format!("{}.wasm", project.name));
    let mut command = Command::new(program);
    command
        .current_dir(&project.dir)
        .arg("--wit-path")
        .arg(kit.wit())
        .args(["--world", "plugin", "componentize"])
        .arg("--python-path")
        .arg(&project.dir)
        .arg("--python-path")
        .arg(kit.python_sdk())
        .arg(ENTRY)
        .arg("--output")
        .arg(&out);
    toolchain::run(&project.name, &mut command, false)?;
    Ok(out)
}
