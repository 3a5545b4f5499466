//! Toolchains `toolhost build` installs for itself when the author has none:
//! pinned versions, each in a folder of toolhost's own cache, installed
//! once with a progress line (componentize-py in a virtualenv, the JS
//! packages under an npm prefix). What installing needs (python3 with
//! venv, npm) is named exactly when it is missing.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::AuthorError;
use super::toolchain::Program;

/// The file an install writes last: a folder without it is installed anew.
const COMPLETE: &str = ".toolhost-complete";

/// Where `toolhost build` keeps the toolchains it installs:
/// `$TOOLHOST_TOOLCHAINS_DIR`, else `toolchains` beside the kit
/// (`~/.cache/toolhost/toolchains`).
pub(super) fn toolchains_dir() -> PathBuf {
    match std::env::var_os("TOOLHOST_TOOLCHAINS_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => super::kit::cache_base().join("toolchains"),
    }
}

/// The folder `name` under the toolchains folder, made by `install` with
/// the program `needs` (found first, or named with its install command)
/// unless an earlier install there completed. `what` names it in the
/// progress line.
pub(super) fn ensure(
    name: &str,
    what: &str,
    needs: &Program<'_>,
    install: impl FnOnce(&Path, PathBuf) -> Result<(), AuthorError>,
) -> Result<PathBuf, AuthorError> {
    ensure_in(&toolchains_dir(), name, what, needs, install)
}

fn ensure_in(
    toolchains: &Path,
    name: &str,
    what: &str,
    needs: &Program<'_>,
    install: impl FnOnce(&Path, PathBuf) -> Result<(), AuthorError>,
) -> Result<PathBuf, AuthorError> {
    let dir = toolchains.join(name);
    if dir.join(COMPLETE).is_file() {
        return Ok(dir);
    }
    let program = needs.find(&[])?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("cannot remove the unfinished install {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    eprintln!("installing {what} into {} (once)", dir.display());
    install(&dir, program)?;
    std::fs::write(dir.join(COMPLETE), b"")
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_install_runs_once_and_an_unfinished_one_is_redone() {
        let cache = tempfile::tempdir().unwrap();
        let dir = cache.path().join("demo");
        let sh = Program {
            name: "sh",
            why: "to test",
            install: "apt-get install dash",
        };
        let missing = Program {
            name: "surely-not-installed-anywhere",
            why: "to test",
            install: "nothing",
        };
        let never = |_: &Path, _: PathBuf| -> Result<(), AuthorError> { panic!("not installed") };
        let err = ensure_in(cache.path(), "demo", "a demo", &missing, never).unwrap_err();
        assert!(
            err.to_string()
                .contains("surely-not-installed-anywhere was not found")
        );
        assert!(!dir.exists(), "nothing is made without the program");

        let installs = std::cell::Cell::new(0);
        let run = |fail: bool| {
            ensure_in(cache.path(), "demo", "a demo", &sh, |dir, _sh| {
                installs.set(installs.get() + 1);
                std::fs::write(dir.join("tool"), b"x").unwrap();
                if fail {
                    return Err(anyhow::anyhow!("no network").into());
                }
                Ok(())
            })
        };
        assert!(run(true).is_err());
        assert!(dir.join("tool").is_file() && !dir.join(COMPLETE).exists());
        assert_eq!(run(false).unwrap(), dir);
        assert_eq!(run(false).unwrap(), dir);
        assert_eq!(
            installs.get(),
            2,
            "redone once after the failure, then kept"
        );
    }
}
