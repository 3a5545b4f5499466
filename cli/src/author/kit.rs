//! The authoring kit: the WIT package and the SDK sources, embedded in the
//! binary and written out once per version so builds need no checkout.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use sha2::{Digest as _, Sha256};

include!(concat!(env!("OUT_DIR"), "/kit.rs"));

/// The Rust SDK's manifest outside the workspace (the checkout's inherits
/// from the workspace).
const RUST_SDK_MANIFEST: &str = include_str!("templates/rust/sdk.Cargo.toml");

/// The kit, written out under one folder.
#[derive(Debug, Clone)]
pub struct Kit {
    root: PathBuf,
}

impl Kit {
    /// The kit under `cache`, written there first if this version of it is
    /// not there yet. `cache` is `$TOOLHOST_KIT_DIR`, else
    /// `$XDG_CACHE_HOME/toolhost/kit`, else `~/.cache/toolhost/kit`.
    pub fn materialize() -> anyhow::Result<Self> {
        Self::materialize_in(&default_cache())
    }

    /// The kit under `cache` (see [`Kit::materialize`]).
    pub fn materialize_in(cache: &Path) -> anyhow::Result<Self> {
        let root = cache.join(version_key());
        if root.join(COMPLETE).is_file() {
            return Ok(Self { root });
        }
        std::fs::create_dir_all(cache)
            .with_context(|| format!("cannot create {}", cache.display()))?;
        let staging = tempfile::Builder::new()
            .prefix(".kit-")
            .tempdir_in(cache)
            .with_context(|| format!("cannot write in {}", cache.display()))?;
        let files = KIT_FILES
            .iter()
            .copied()
            .chain([("sdk/rust/Cargo.toml", RUST_SDK_MANIFEST.as_bytes())]);
        for (path, bytes) in files.chain([(COMPLETE, &b""[..])]) {
            let target = staging.path().join(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
            std::fs::write(&target, bytes)
                .with_context(|| format!("cannot write {}", target.display()))?;
        }
        let staged = staging.keep();
        if let Err(err) = std::fs::rename(&staged, &root) {
            // Another process wrote the same version first: use theirs.
            let _ = std::fs::remove_dir_all(&staged);
            if !root.join(COMPLETE).is_file() {
                return Err(err).with_context(|| format!("cannot create {}", root.display()));
            }
        }
        Ok(Self { root })
    }

    /// The folder holding the WIT package (`tool.wit` and `deps/`).
    pub fn wit(&self) -> PathBuf {
        self.root.join("wit")
    }

    /// The Rust SDK crate (`toolhost-sdk`).
    pub fn rust_sdk(&self) -> PathBuf {
        self.root.join("sdk/rust")
    }

    /// The folder to put on Python's path: it holds the `toolhost` package.
    pub fn python_sdk(&self) -> PathBuf {
        self.root.join("sdk/python")
    }

    /// The JS SDK package folder.
    pub fn js_sdk(&self) -> PathBuf {
        self.root.join("sdk/js")
    }
}

/// The file written last: a kit folder without it is incomplete.
const COMPLETE: &str = ".complete";

/// The kit's folder name: the crate version and a hash of every file, so a
/// changed SDK never reuses an old copy.
fn version_key() -> String {
    let mut hash = Sha256::new();
    for (path, bytes) in KIT_FILES {
        hash.update(path.as_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    }
    hash.update(RUST_SDK_MANIFEST.as_bytes());
    let digest = hex::encode(hash.finalize());
    format!("{}-{}", env!("CARGO_PKG_VERSION"), &digest[..12])
}

fn default_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("TOOLHOST_KIT_DIR") {
        return PathBuf::from(dir);
    }
    cache_base().join("kit")
}

/// toolhost's folder in the user's cache: `$XDG_CACHE_HOME/toolhost`, else
/// `~/.cache/toolhost`.
pub(super) fn cache_base() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("toolhost")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kit_holds_the_wit_package_and_every_sdk() {
        let cache = tempfile::tempdir().unwrap();
        let kit = Kit::materialize_in(cache.path()).unwrap();
        assert!(kit.wit().join("tool.wit").is_file());
        assert!(kit.wit().join("deps").is_dir());
        assert!(kit.rust_sdk().join("src/lib.rs").is_file());
        assert!(kit.python_sdk().join("toolhost/__init__.py").is_file());
        assert!(kit.js_sdk().join("package.json").is_file());
        // A second call reuses the folder.
        let again = Kit::materialize_in(cache.path()).unwrap();
        assert_eq!(again.root, kit.root);
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 1);
    }

    #[test]
    fn the_standalone_rust_sdk_manifest_has_the_checkouts_dependencies() {
        let ours: toml::Table = toml::from_str(RUST_SDK_MANIFEST).unwrap();
        let checkout: toml::Table =
            toml::from_str(include_str!("../../../sdk/rust/Cargo.toml")).unwrap();
        let names = |t: &toml::Table| {
            let mut names: Vec<String> = t["dependencies"]
                .as_table()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            names.sort();
            names
        };
        assert_eq!(names(&ours), names(&checkout));
        assert_eq!(ours["package"]["name"].as_str(), Some("toolhost-sdk"));
    }
}
