//! What a version was loaded from, kept so it can be loaded again after a
//! restart for the sessions still bound to it: the `toolhost.toml` text, a
//! named agent's definition, and its component files, each kept once by
//! digest under `<state>/agents/blobs/<sha256>.wasm`. The compile cache,
//! keyed by content, then gives their code back without a compile.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::tools::registry::{Origin, Registry};

/// The folder, under the agents directory, that holds component files by
/// digest.
pub const BLOBS_DIR: &str = "blobs";

/// What one version was loaded from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionInputs {
    /// `toolhost.toml`'s text as the version was loaded (`None` when the
    /// config came from code, or there was no file).
    pub config: Option<String>,
    /// A named agent's definition, as stored (`None` for the default agent).
    pub definition: Option<Value>,
    /// Its component files: the slug each was loaded under, and the hex
    /// SHA-256 its blob is kept by.
    pub files: BTreeMap<String, String>,
}

impl VersionInputs {
    /// These inputs, with the component files of `registry`'s tools by
    /// slug and digest.
    pub(crate) fn with_files_of(self, registry: &Registry) -> Self {
        let files = registry
            .all()
            .filter(|tool| tool.origin() == Origin::File)
            .filter_map(|tool| {
                let slug = tool.path().file_stem()?.to_str()?.to_string();
                Some((slug, tool.sha256().to_string()))
            })
            .collect();
        Self { files, ..self }
    }
}

/// Component files kept by digest.
pub(crate) struct Blobs {
    dir: PathBuf,
}

impl Blobs {
    /// Kept under `<agents root>/blobs`.
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            dir: root.join(BLOBS_DIR),
        }
    }

    fn path(&self, sha256: &str) -> PathBuf {
        self.dir.join(format!("{sha256}.wasm"))
    }

    /// Keep the file of every tool of `registry` loaded from the tools
    /// folder, unless its blob is kept already. A file that no longer hashes
    /// to what was loaded (replaced since) is not kept: that version then
    /// cannot be loaded again after a restart.
    pub(crate) fn keep(&self, registry: &Registry) -> anyhow::Result<()> {
        crate::files::create_private_dir(&self.dir)?;
        let files: BTreeMap<&str, &Path> = registry
            .all()
            .filter(|tool| tool.origin() == Origin::File)
            .map(|tool| (tool.sha256(), tool.path()))
            .collect();
        for (sha256, path) in files {
            let blob = self.path(sha256);
            if blob.exists() {
                // Kept again: a fleet's collection spares what is young.
                if let Err(e) = std::fs::File::options()
                    .append(true)
                    .open(&blob)
                    .and_then(|file| file.set_modified(std::time::SystemTime::now()))
                {
                    tracing::warn!("cannot touch {}: {e}", blob.display());
                }
                continue;
            }
            let bytes = std::fs::read(path)
                .with_context(|| format!("cannot read {} to keep it", path.display()))?;
            if format!("{:x}", Sha256::digest(&bytes)) != sha256 {
                tracing::warn!(
                    "{} changed since it was loaded; its version cannot be loaded again after \
                     a restart",
                    path.display()
                );
                continue;
            }
            crate::files::write_atomically(&blob, &bytes)?;
        }
        Ok(())
    }

    /// Lay `files` (slug → digest) out in `dir` as `<slug>.wasm`, for a load.
    pub(crate) fn lay_out(
        &self,
        files: &BTreeMap<String, String>,
        dir: &Path,
    ) -> anyhow::Result<()> {
        if dir.exists() {
            std::fs::remove_dir_all(dir)
                .with_context(|| format!("cannot clear {}", dir.display()))?;
        }
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for (slug, sha256) in files {
            // Kept records name files by slug and digest: neither names a
            // path beyond its own file.
            anyhow::ensure!(
                crate::tool::is_identifier(slug),
                "a component is kept under the slug {}, which is not a tool name",
                crate::shown::quoted(slug)
            );
            anyhow::ensure!(
                sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit()),
                "the component `{slug}` is kept under {}, which is not a SHA-256",
                crate::shown::quoted(sha256)
            );
            let blob = self.path(sha256);
            let target = dir.join(format!("{slug}.wasm"));
            if std::fs::hard_link(&blob, &target).is_err() {
                std::fs::copy(&blob, &target).with_context(|| {
                    format!("the component `{slug}` ({sha256}) is no longer kept")
                })?;
            }
        }
        Ok(())
    }

    /// Remove every blob no digest of `referenced` names and, given
    /// `grace`, that was written longer ago than that (a fleet's servers
    /// keep a version's files before its record names them).
    pub(crate) fn collect(
        &self,
        referenced: &BTreeSet<String>,
        grace: Option<std::time::Duration>,
    ) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(sha256) = name.to_str().and_then(|n| n.strip_suffix(".wasm")) else {
                continue;
            };
            let young = grace.is_some_and(|grace| {
                entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|at| at.elapsed().ok())
                    .is_none_or(|age| age < grace)
            });
            if !referenced.contains(sha256)
                && !young
                && let Err(e) = std::fs::remove_file(entry.path())
            {
                tracing::warn!("cannot remove {}: {e}", entry.path().display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept record (on disk, or from a fleet's Redis) names each file by
    /// slug and digest: one naming a path (`../x`, `/etc`, a digest with a
    /// separator) lays nothing out beyond its own folder, and says why.
    #[test]
    fn kept_slugs_and_digests_name_no_path() {
        let root = tempfile::tempdir().unwrap();
        let blobs = Blobs::new(root.path());
        std::fs::create_dir_all(&blobs.dir).unwrap();
        let digest = "a".repeat(64);
        std::fs::write(blobs.path(&digest), b"\0asm").unwrap();
        let outside = root.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.wasm"), b"kept").unwrap();
        let dir = root.path().join("laid-out");

        let hostile = [
            ("../outside/evil", digest.clone(), "not a tool name"),
            ("/etc/passwd", digest.clone(), "not a tool name"),
            (&*"x".repeat(65), digest.clone(), "not a tool name"),
            ("echo", "../../outside/secret".to_string(), "not a SHA-256"),
            ("echo", format!("{}/x", "a".repeat(62)), "not a SHA-256"),
            ("echo", "A".repeat(1 << 20), "not a SHA-256"),
        ];
        for (slug, sha256, says) in hostile {
            let files = BTreeMap::from([(slug.to_string(), sha256)]);
            let err = format!("{:#}", blobs.lay_out(&files, &dir).unwrap_err());
            assert!(err.contains(says), "{slug}: {err}");
            assert!(
                err.len() < 1024,
                "the refusal quotes the value cut: {}",
                err.len()
            );
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{slug}");
        }
        assert_eq!(std::fs::read(outside.join("secret.wasm")).unwrap(), b"kept");

        let files = BTreeMap::from([("echo".to_string(), digest)]);
        blobs.lay_out(&files, &dir).unwrap();
        assert_eq!(std::fs::read(dir.join("echo.wasm")).unwrap(), b"\0asm");
    }
}
