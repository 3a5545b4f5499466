//! Building a Rust tool: `cargo build --release --target wasm32-wasip2`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context as _;
use serde::Deserialize;

use super::AuthorError;
use super::project::Project;
use super::toolchain::{self, Program};

const CARGO: Program<'static> = Program {
    name: "cargo",
    why: "it builds Rust tools",
    install: "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh",
};

const TARGET: &str = "wasm32-wasip2";

/// Builds `project` and returns the component it made.
pub(super) fn build(project: &Project) -> Result<PathBuf, AuthorError> {
    let cargo = CARGO.find(&[])?;
    ensure_target(&project.dir)?;
    let manifest = project.dir.join("Cargo.toml");
    let mut command = Command::new(cargo);
    // Inside the project, so its `.cargo/config.toml` applies.
    command
        .current_dir(&project.dir)
        .args(["build", "--release", "--target", TARGET])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--message-format=json-render-diagnostics");
    // cargo reads a relative target directory against its own working
    // directory, the project's: keep it relative to where toolhost runs, so
    // every project shares the one the author named.
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from)
        && target.is_relative()
    {
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        command.env("CARGO_TARGET_DIR", cwd.join(target));
    }
    // No DWARF in components unless the author asks: they load faster.
    for (var, value) in [
        ("CARGO_PROFILE_RELEASE_DEBUG", "false"),
        ("CARGO_PROFILE_RELEASE_STRIP", "debuginfo"),
    ] {
        if std::env::var_os(var).is_none() {
            command.env(var, value);
        }
    }
    let stdout = toolchain::run(&project.name, &mut command, true)?;
    component_of(&stdout, &manifest).ok_or_else(|| {
        AuthorError::Other(anyhow::anyhow!(
            "{}: cargo built no `.wasm` for {}; is the crate a `cdylib` (`[lib] crate-type = [\"cdylib\"]`)?",
            project.name,
            manifest.display()
        ))
    })
}

/// With rustup, the `wasm32-wasip2` target of the toolchain the project
/// builds with is added when it is missing, once, saying so on stderr (as
/// componentize-py and the JavaScript packages are installed); without
/// rustup, cargo's own error says what is wrong.
fn ensure_target(project: &Path) -> Result<(), AuthorError> {
    ensure_target_with(Path::new("rustup"), project)
}

/// [`ensure_target`] with the `rustup` at `rustup`.
fn ensure_target_with(rustup: &Path, project: &Path) -> Result<(), AuthorError> {
    let rustup = |args: &[&str]| {
        Command::new(rustup)
            .current_dir(project)
            .args(args)
            .output()
    };
    let Ok(listed) = rustup(&["target", "list", "--installed"]) else {
        return Ok(());
    };
    let installed = String::from_utf8_lossy(&listed.stdout);
    if !listed.status.success() || installed.lines().any(|line| line.trim() == TARGET) {
        return Ok(());
    }
    let missing = |detail: String| AuthorError::MissingToolchain {
        program: format!("the Rust target {TARGET}"),
        why: format!("Rust tools are built for it, and adding it failed: {detail}"),
        install: format!("rustup target add {TARGET}"),
    };
    eprintln!("installing the Rust target {TARGET} (rustup target add {TARGET}, once)");
    let added = rustup(&["target", "add", TARGET]).map_err(|e| missing(e.to_string()))?;
    if !added.status.success() {
        let stderr = String::from_utf8_lossy(&added.stderr);
        return Err(missing(stderr.trim().to_string()));
    }
    Ok(())
}

/// One line of cargo's JSON messages; only artifacts matter here.
#[derive(Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    manifest_path: PathBuf,
    #[serde(default)]
    filenames: Vec<PathBuf>,
}

/// The `.wasm` file cargo reported for the crate at `manifest`.
fn component_of(stdout: &[u8], manifest: &Path) -> Option<PathBuf> {
    let manifest = manifest.canonicalize().ok()?;
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Message>(line).ok())
        .filter(|m| m.reason == "compiler-artifact")
        .filter(|m| m.manifest_path.canonicalize().is_ok_and(|p| p == manifest))
        .flat_map(|m| m.filenames)
        .find(|file| file.extension().is_some_and(|ext| ext == "wasm"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `rustup` that lists `installed` as the installed targets, records
    /// its calls in `calls` beside it, and fails `target add` when `add_fails`.
    fn fake_rustup(dir: &Path, installed: &str, add_fails: bool) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let script = dir.join("rustup");
        let add = if add_fails {
            "echo 'error: no network' >&2; exit 1"
        } else {
            "exit 0"
        };
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho \"$*\" >> \"$(dirname \"$0\")/calls\"\n\
                 case \"$1 $2\" in\n\
                 \"target list\") printf '%s\\n' {installed} ;;\n\
                 \"target add\") {add} ;;\n\
                 esac\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        script
    }

    fn calls(dir: &Path) -> String {
        std::fs::read_to_string(dir.join("calls")).unwrap_or_default()
    }

    #[test]
    fn a_missing_target_is_added_and_a_present_one_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let rustup = fake_rustup(dir.path(), "x86_64-unknown-linux-gnu", false);
        ensure_target_with(&rustup, dir.path()).unwrap();
        assert_eq!(
            calls(dir.path()),
            "target list --installed\ntarget add wasm32-wasip2\n"
        );

        let dir = tempfile::tempdir().unwrap();
        let rustup = fake_rustup(dir.path(), "wasm32-wasip2", false);
        ensure_target_with(&rustup, dir.path()).unwrap();
        assert_eq!(calls(dir.path()), "target list --installed\n");
    }

    #[test]
    fn a_target_that_cannot_be_added_names_the_command_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let rustup = fake_rustup(dir.path(), "x86_64-unknown-linux-gnu", true);
        let err = ensure_target_with(&rustup, dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("rustup target add wasm32-wasip2"), "{err}");
        assert!(err.contains("no network"), "{err}");
        // Without rustup, cargo's own error says what is wrong.
        let nowhere = dir.path().join("no-rustup-here");
        ensure_target_with(&nowhere, dir.path()).unwrap();
    }

    #[test]
    fn the_component_is_the_wasm_artifact_of_the_projects_own_crate() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("Cargo.toml");
        std::fs::write(&manifest, "").unwrap();
        let other = "/elsewhere/Cargo.toml";
        let stdout = format!(
            "{{\"reason\":\"compiler-artifact\",\"manifest_path\":\"{other}\",\"filenames\":[\"/t/dep.wasm\"]}}\n\
             not json\n\
             {{\"reason\":\"compiler-artifact\",\"manifest_path\":{m:?},\"filenames\":[\"/t/x.rlib\",\"/t/x.wasm\"]}}\n\
             {{\"reason\":\"build-finished\",\"success\":true}}\n",
            m = manifest.display().to_string()
        );
        assert_eq!(
            component_of(stdout.as_bytes(), &manifest),
            Some(PathBuf::from("/t/x.wasm"))
        );
        assert_eq!(component_of(b"", &manifest), None);
    }
}
