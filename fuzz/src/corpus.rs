//! The files beside the targets: checked-in seeds (`corpus/<target>/`),
//! crashes kept as regression tests (`regressions/<target>/`) and crashes
//! just found (`artifacts/<target>/`, as cargo-fuzz names them).

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::targets::Target;

/// The fuzz crate's folder.
pub fn fuzz_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The checked-in seeds of `target`.
pub fn seed_dir(target: &str) -> PathBuf {
    fuzz_dir().join("corpus").join(target)
}

/// The regression inputs of `target`.
pub fn regression_dir(target: &str) -> PathBuf {
    fuzz_dir().join("regressions").join(target)
}

/// Where crashes of `target` are written.
pub fn artifact_dir(target: &str) -> PathBuf {
    fuzz_dir().join("artifacts").join(target)
}

/// Every file in `dir` (none if it does not exist), sorted by name.
pub fn files(dir: &Path) -> io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| std::fs::read(&path).map(|bytes| (path, bytes)))
        .collect()
}

/// The seeds the runners start from: the checked-in ones, then those the
/// target makes at run time.
pub fn seeds(target: &Target) -> io::Result<Vec<Vec<u8>>> {
    let mut seeds: Vec<Vec<u8>> = files(&seed_dir(target.name))?
        .into_iter()
        .map(|(_, bytes)| bytes)
        .collect();
    seeds.extend((target.extra_seeds)());
    Ok(seeds)
}

/// Write the input that broke `target` as `artifacts/<target>/<kind>-<hash>`.
pub fn write_artifact(target: &str, kind: &str, input: &[u8]) -> io::Result<PathBuf> {
    let dir = artifact_dir(target);
    std::fs::create_dir_all(&dir)?;
    let hash = hex::encode(&Sha256::digest(input)[..20]);
    let path = dir.join(format!("{kind}-{hash}"));
    std::fs::write(&path, input)?;
    Ok(path)
}
