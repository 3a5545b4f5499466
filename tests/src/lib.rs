//! The example tools, test guests and MCP conformance fixtures, built once
//! for `wasm32-wasip2`.
//!
//! The build script compiles every crate in `plugins/`, `tests/guests/` and
//! `tests/conformance/tools/` with one `cargo build` (into `target/guests`)
//! and this crate exposes the resulting files: one constant per component
//! (`ECHO`, `TRAP`, …) holding the absolute path of its `.wasm`, and the
//! lists [`PLUGINS`], [`GUESTS`] and [`CONFORMANCE`]. Tests share the build instead of compiling guests themselves:
//!
//! ```no_run
//! let dir = toolhost_test_artifacts::tools_dir(&[
//!     ("echo", toolhost_test_artifacts::ECHO),
//!     ("trap", toolhost_test_artifacts::TRAP),
//! ])?;
//! let tools = dir.path().join("tools"); // tools/echo.wasm, tools/trap.wasm
//! # let _ = tools;
//! # Ok::<(), std::io::Error>(())
//! ```

pub mod python;
pub mod redis;

use std::fs;
use std::io;

use tempfile::TempDir;

include!(concat!(env!("OUT_DIR"), "/artifacts.rs"));

/// The path of the plugin, guest or conformance fixture `slug` (e.g.
/// `"echo"`), if there is one.
pub fn find(slug: &str) -> Option<&'static str> {
    PLUGINS
        .iter()
        .chain(GUESTS)
        .chain(CONFORMANCE)
        .find(|(name, _)| *name == slug)
        .map(|(_, path)| *path)
}

/// A fresh temporary directory holding `tools/<slug>.wasm` for each
/// `(slug, path)` given (copies, so a test may change or delete them). The
/// directory is removed when the returned value is dropped.
pub fn tools_dir(tools: &[(&str, &str)]) -> io::Result<TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("toolhost-tools-")
        .tempdir()?;
    let tools_path = dir.path().join("tools");
    fs::create_dir(&tools_path)?;
    for (slug, path) in tools {
        fs::copy(path, tools_path.join(format!("{slug}.wasm"))).map_err(|err| {
            io::Error::new(
                err.kind(),
                format!("cannot copy {path} as {slug}.wasm: {err}"),
            )
        })?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The preamble of a WebAssembly component (not a core module).
    const COMPONENT_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

    #[test]
    fn every_artifact_is_a_component() {
        assert!(PLUGINS.len() >= 8, "{PLUGINS:?}");
        assert!(GUESTS.len() >= 15, "{GUESTS:?}");
        assert!(CONFORMANCE.len() >= 10, "{CONFORMANCE:?}");
        for (slug, path) in PLUGINS.iter().chain(GUESTS).chain(CONFORMANCE) {
            let bytes = fs::read(path).unwrap_or_else(|err| panic!("{slug}: {path}: {err}"));
            assert_eq!(
                bytes.get(..8),
                Some(&COMPONENT_HEADER[..]),
                "{slug} at {path}"
            );
        }
    }

    #[test]
    fn constants_and_lists_agree() {
        assert_eq!(find("echo"), Some(ECHO));
        assert_eq!(find("no_contract"), Some(NO_CONTRACT));
        assert_eq!(find("missing"), None);
        assert!(
            PLUGINS
                .iter()
                .all(|(slug, _)| !GUESTS.iter().any(|(g, _)| g == slug))
        );
    }

    #[test]
    fn tools_dir_lays_out_copies() {
        let dir = tools_dir(&[("echo", ECHO), ("renamed", TRAP)]).expect("tools dir");
        let tools = dir.path().join("tools");
        let mut names: Vec<String> = fs::read_dir(&tools)
            .expect("read tools")
            .map(|entry| {
                entry
                    .expect("entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        assert_eq!(names, ["echo.wasm", "renamed.wasm"]);
        assert_eq!(
            fs::read(tools.join("echo.wasm")).expect("copy"),
            fs::read(ECHO).expect("original")
        );
        assert!(tools_dir(&[("x", "/nonexistent/x.wasm")]).is_err());
    }
}
