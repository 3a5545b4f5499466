//! Building a Python tool: `componentize-py` over the project and the SDK.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::project::Project;
use super::toolchain::{self, Program, upward};
use super::{AuthorError, Kit, install};

/// The componentize-py the SDK is written and tested against.
const COMPONENTIZE_PY_VERSION: &str = "0.25.1";

const COMPONENTIZE_PY: Program<'static> = Program {
    name: "componentize-py",
    why: "it builds Python tools",
    install: "pip install componentize-py==0.25.1",
};

/// What installs componentize-py where the author has none.
const PYTHON: Program<'static> = Program {
    name: "python3",
    why: "toolhost installs componentize-py 0.25.1, which builds Python tools, with it",
    install: "apt-get install python3 python3-venv  (or pip install componentize-py==0.25.1 yourself)",
};

/// The SDK module componentize-py starts from: it imports the author's
/// `tool` module and exports what it declared.
const ENTRY: &str = "toolhost.component";

/// Builds `project` into a component in `scratch` and returns its path.
pub(super) fn build(project: &Project, kit: &Kit, scratch: &Path) -> Result<PathBuf, AuthorError> {
    let program = componentize_py(&project.dir)?;
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

/// The author's componentize-py (the project's `.venv`, then `PATH`), else
/// the pinned one in toolhost's own virtualenv, installed first if needed.
fn componentize_py(project: &Path) -> Result<PathBuf, AuthorError> {
    if let Ok(found) = COMPONENTIZE_PY.find(&upward(project, ".venv/bin")) {
        return Ok(found);
    }
    let name = format!("componentize-py-{COMPONENTIZE_PY_VERSION}");
    let venv = install::ensure(
        &name,
        &format!("componentize-py {COMPONENTIZE_PY_VERSION}"),
        &PYTHON,
        |venv, python| {
            toolchain::run(
                &name,
                Command::new(python).args(["-m", "venv"]).arg(venv),
                false,
            )?;
            toolchain::run(
                &name,
                Command::new(venv.join("bin/pip")).args([
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    &format!("componentize-py=={COMPONENTIZE_PY_VERSION}"),
                ]),
                false,
            )?;
            Ok(())
        },
    )?;
    Ok(venv.join("bin").join(COMPONENTIZE_PY.name))
}
