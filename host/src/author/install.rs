//! Toolchains `toolhost build` installs for itself when the author has none:
//! pinned versions, each in a folder of toolhost's own cache, installed
//! once with a progress line (componentize-py in a virtualenv, the JS
//! packages under an npm prefix). What installing needs (python3 with
//! venv, npm) is named exactly when it is missing.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::AuthorError;

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

/// The folder `name` under the toolchains folder, if an install there
/// completed.
pub(super) fn installed(name: &str) -> Option<PathBuf> {
    let dir = toolchains_dir().join(name);
    dir.join(COMPLETE).is_file().then_some(dir)
}

/// The folder `name` under the toolchains folder, made by `install` unless
/// an earlier install there completed. `what` names it in the progress
/// line.
pub(super) fn ensure(
    name: &str,
    what: &str,
    install: impl FnOnce(&Path) -> Result<(), AuthorError>,
) -> Result<PathBuf, AuthorError> {
    ensure_in(&toolchains_dir(), name, what, install)
}

fn ensure_in(
    toolchains: &Path,
    name: &str,
    what: &str,
    install: impl FnOnce(&Path) -> Result<(), AuthorError>,
) -> Result<PathBuf, AuthorError> {
    let dir = toolchains.join(name);
    if dir.join(COMPLETE).is_file() {
        return Ok(dir);
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("cannot remove the unfinished install {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    eprintln!("installing {what} into {} (once)", dir.display());
    install(&dir)?;
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
        let installs = std::cell::Cell::new(0);
        let run = |fail: bool| {
            ensure_in(cache.path(), "demo", "a demo", |dir| {
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
