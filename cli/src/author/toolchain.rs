//! Finding and running the language toolchains a build needs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context as _;

use super::AuthorError;

/// A program a build runs, and what to tell the author when it is missing.
pub(super) struct Program<'a> {
    /// The executable's name.
    pub name: &'a str,
    /// What the build needs it for.
    pub why: &'a str,
    /// The exact command that installs it.
    pub install: &'a str,
}

impl Program<'_> {
    /// The program's path: the first of `dirs` holding it, else `PATH`'s.
    pub fn find(&self, dirs: &[PathBuf]) -> Result<PathBuf, AuthorError> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        dirs.iter()
            .cloned()
            .chain(std::env::split_paths(&path))
            .map(|dir| dir.join(self.name))
            .find(|candidate| is_executable(candidate))
            .ok_or_else(|| AuthorError::MissingToolchain {
                program: self.name.to_string(),
                why: self.why.to_string(),
                install: self.install.to_string(),
            })
    }
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// `dir` and each of its ancestors joined with `relative`, nearest first
/// (where npm and virtualenvs put a project's programs).
pub(super) fn upward(dir: &Path, relative: &str) -> Vec<PathBuf> {
    dir.ancestors().map(|dir| dir.join(relative)).collect()
}

/// Runs `command` to completion with its output captured, and returns its
/// stdout. When it fails, the error holds what it printed (stderr, then
/// stdout unless `stdout_is_data`), for the author to read as is.
pub(super) fn run(
    tool: &str,
    command: &mut Command,
    stdout_is_data: bool,
) -> Result<Vec<u8>, AuthorError> {
    let shown = display(command);
    let output = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {shown}"))?;
    if output.status.success() {
        return Ok(output.stdout);
    }
    let mut printed = String::from_utf8_lossy(&output.stderr).into_owned();
    if !stdout_is_data {
        printed.push_str(&String::from_utf8_lossy(&output.stdout));
    }
    Err(AuthorError::ToolchainFailed {
        tool: tool.to_string(),
        command: shown,
        status: output.status.to_string(),
        output: printed.trim_end().to_string(),
    })
}

/// A command as it would be typed.
fn display(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(quoted)
        .collect::<Vec<_>>()
        .join(" ")
}

fn quoted(arg: &OsStr) -> String {
    let arg = arg.to_string_lossy();
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,".contains(c))
    {
        arg.into_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_names_its_install_command() {
        let program = Program {
            name: "surely-not-installed-anywhere",
            why: "to test",
            install: "pip install surely",
        };
        let err = program.find(&[]).unwrap_err().to_string();
        assert!(
            err.contains("surely-not-installed-anywhere was not found (to test)"),
            "{err}"
        );
        assert!(err.contains("pip install surely"), "{err}");
    }

    #[test]
    fn a_failing_command_keeps_its_output_and_is_shown_as_typed() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo out; echo err >&2; exit 3"]);
        let err = run("demo", &mut command, false).unwrap_err().to_string();
        assert!(
            err.starts_with("demo: sh -c 'echo out; echo err >&2; exit 3' failed"),
            "{err}"
        );
        assert!(err.contains("err\nout"), "{err}");
        let out = run("demo", Command::new("sh").args(["-c", "echo hi"]), true).unwrap();
        assert_eq!(out, b"hi\n");
    }
}
