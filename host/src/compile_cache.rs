//! The compile cache on disk: Cranelift compilations named by the
//! component's SHA-256 and the engine's compatibility hash, an index from
//! tool files to the content they had, and a size cap kept by removing the
//! least recently used compilations.
//!
//! Only files this cache wrote are ever deserialized. Several hosts may
//! share one cache: entries are written whole (temporary file, rename), and
//! a reader that loses a race with another host's eviction compiles again.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::code::Compiled;
use crate::files::FileStamp;

/// How old a temporary file in the cache must be to count as abandoned: a
/// host killed mid-write leaves one, and hosts sharing the cache may be
/// writing theirs now.
const ABANDONED_WRITE_AGE: Duration = Duration::from_secs(3600);

/// Whether `path` is a plain file this user owns and no one else may write:
/// a compilation is native code, so one planted by anyone else is refused.
fn owned(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.file_type().is_file() {
        return Err("it is not a plain file".into());
    }
    if meta.uid() != me {
        return Err(format!(
            "it is owned by uid {}, not this user ({me})",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "its mode {:o} lets other users write it",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

/// The folder of the file index, under the cache folder.
const INDEX_DIR: &str = "files";

/// One compile cache folder, for one engine.
pub(crate) struct CompileCache {
    dir: PathBuf,
    engine_key: String,
    max_bytes: u64,
    opened: SystemTime,
}

impl CompileCache {
    /// Open (or create) the cache at `dir` for `engine`'s compilations, and
    /// tidy it: remove abandoned writes and keep it under `max_bytes`.
    pub(crate) fn open(dir: &Path, engine: &Engine, max_bytes: u64) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create cache dir {}", dir.display()))?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let cache = Self {
            dir: dir.to_path_buf(),
            engine_key: format!("{:016x}", hasher.finish()),
            max_bytes,
            opened: SystemTime::now(),
        };
        cache.tidy(None);
        Ok(cache)
    }

    /// Whether the compilation of the content `sha256` is cached.
    pub(crate) fn holds(&self, sha256: &str) -> bool {
        self.entry_path(sha256).exists()
    }

    /// Load `bytes`' compilation from the cache, or compile it with
    /// `engine` and cache it.
    pub(crate) fn load_or_compile(
        &self,
        engine: &Engine,
        bytes: &[u8],
    ) -> anyhow::Result<Compiled> {
        self.load_or_compile_hashed(engine, bytes, hex::encode(Sha256::digest(bytes)))
    }

    /// [`Self::load_or_compile`] for `bytes` whose SHA-256 the caller has.
    pub(crate) fn load_or_compile_hashed(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: String,
    ) -> anyhow::Result<Compiled> {
        if let Some(component) = self.load(engine, &sha256) {
            return Ok(Compiled::optimized(component, sha256));
        }
        let component = Component::new(engine, bytes).map_err(|e| anyhow::anyhow!("{e:#}"))?;
        let path = self.entry_path(&sha256);
        match component.serialize() {
            Ok(serialized) => match crate::files::write_atomically(&path, &serialized) {
                Ok(()) => self.tidy(Some(&path)),
                Err(e) => {
                    tracing::warn!(path = %path.display(), "cannot write compile cache: {e:#}")
                }
            },
            Err(e) => tracing::warn!("cannot serialize component: {e}"),
        }
        Ok(Compiled::optimized(component, sha256))
    }

    /// The cached compilation of the tool file at `file`, if `stamp` is the
    /// stamp [`record`](Self::record) last saw for it: the file is not read.
    pub(crate) fn load_file(
        &self,
        engine: &Engine,
        file: &Path,
        stamp: FileStamp,
    ) -> Option<Compiled> {
        let entry = IndexEntry::read(&self.index_path(file))?;
        if entry.stamp != stamp.to_line() {
            return None;
        }
        let component = self.load(engine, &entry.sha256)?;
        Some(Compiled::optimized(component, entry.sha256))
    }

    /// Record that the tool file at `file`, as of `stamp`, holds the
    /// content `sha256`.
    pub(crate) fn record(&self, file: &Path, stamp: FileStamp, sha256: &str) {
        let path = self.index_path(file);
        let entry = IndexEntry {
            stamp: stamp.to_line(),
            sha256: sha256.to_string(),
            file: canonical(file).to_str().map(PathBuf::from),
        };
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(anyhow::Error::from)
            .and_then(|()| crate::files::write_atomically(&path, entry.to_text().as_bytes()));
        if let Err(e) = written {
            tracing::warn!(path = %path.display(), "cannot record the file's stamp: {e:#}");
        }
    }

    /// Deserialize the cached compilation of `sha256` and mark it used; an
    /// entry that cannot be loaded (cut short, from another wasmtime) is
    /// removed.
    fn load(&self, engine: &Engine, sha256: &str) -> Option<Component> {
        let path = self.entry_path(sha256);
        if !path.exists() {
            return None;
        }
        if let Err(why) = owned(&path) {
            tracing::warn!(path = %path.display(), "not loading a cache entry: {why}; compiling again");
            return None;
        }
        // SAFETY: the file is in our own cache folder, named by the content
        // hash and this engine's compatibility hash, written only by
        // `files::write_atomically` from `Component::serialize`, and owned
        // by this user with no one else able to write it (`owned`).
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => {
                mark_used(&path);
                Some(component)
            }
            Err(e) => {
                if path.exists() {
                    tracing::warn!(path = %path.display(), "discarding unusable cache entry: {e}");
                    let _ = std::fs::remove_file(&path);
                }
                None
            }
        }
    }

    fn entry_path(&self, sha256: &str) -> PathBuf {
        self.dir.join(format!("{sha256}-{}.cwasm", self.engine_key))
    }

    fn index_path(&self, file: &Path) -> PathBuf {
        let key = hex::encode(Sha256::digest(
            canonical(file).as_os_str().as_encoded_bytes(),
        ));
        self.dir.join(INDEX_DIR).join(&key[..32])
    }

    /// Remove abandoned temporary files; while the compilations take more
    /// than the cap, remove the least recently used (never `keep`, the one
    /// just written); then drop index entries whose compilation or tool
    /// file is gone.
    fn tidy(&self, keep: Option<&Path>) {
        let index_dir = self.dir.join(INDEX_DIR);
        let mut compilations = Vec::new();
        for entry in read_dir(&self.dir).chain(read_dir(&index_dir)) {
            let (path, meta) = entry;
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with(".tmp") {
                if age(&meta).is_some_and(|age| age >= ABANDONED_WRITE_AGE) {
                    let _ = std::fs::remove_file(&path);
                }
            } else if name.ends_with(".cwasm") && meta.is_file() {
                compilations.push((
                    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    meta.len(),
                    path,
                ));
            }
        }
        let mut total: u64 = compilations.iter().map(|(_, len, _)| len).sum();
        if total > self.max_bytes {
            compilations.sort();
            let mut evicted_in_use = 0;
            for (used, len, path) in &compilations {
                if total <= self.max_bytes {
                    break;
                }
                if Some(path.as_path()) == keep || std::fs::remove_file(path).is_err() {
                    continue;
                }
                total -= len;
                if *used >= self.opened {
                    evicted_in_use += 1;
                }
            }
            if evicted_in_use > 0 {
                tracing::warn!(
                    cache = %self.dir.display(),
                    "the compile cache is over its cap of {} MiB with compilations in use \
                     ({evicted_in_use} removed that were loaded since this host started, so \
                     they compile again at the next start): raise `[limits] compile_cache_mb`",
                    self.max_bytes >> 20
                );
            }
        }
        self.prune_index(&index_dir);
    }

    /// Remove index entries whose compilation (for any engine) is gone or
    /// whose tool file no longer exists.
    fn prune_index(&self, index_dir: &Path) {
        let names: std::collections::HashSet<String> = read_dir(&self.dir)
            .filter_map(|(path, _)| {
                let name = path.file_name()?.to_str()?;
                Some(name.split_once('-')?.0.to_string())
            })
            .collect();
        for (path, _) in read_dir(index_dir) {
            let Some(entry) = IndexEntry::read(&path) else {
                continue;
            };
            let stale = !names.contains(&entry.sha256)
                || entry.file.as_ref().is_some_and(|file| !file.exists());
            if stale {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// One tool file's entry in the index: its stamp, the SHA-256 of its
/// content then, and its path (when UTF-8; entries older than pruning have
/// none), by which an entry of a deleted file is pruned.
struct IndexEntry {
    stamp: String,
    sha256: String,
    file: Option<PathBuf>,
}

impl IndexEntry {
    fn read(path: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut lines = text.lines();
        let (stamp, sha256) = lines.next()?.rsplit_once(' ')?;
        if sha256.len() != 64 {
            return None;
        }
        Some(Self {
            stamp: stamp.to_string(),
            sha256: sha256.to_string(),
            file: lines.next().filter(|l| !l.is_empty()).map(PathBuf::from),
        })
    }

    fn to_text(&self) -> String {
        let file = self
            .file
            .as_deref()
            .and_then(Path::to_str)
            .unwrap_or_default();
        format!("{} {}\n{file}\n", self.stamp, self.sha256)
    }
}

fn canonical(file: &Path) -> PathBuf {
    file.canonicalize().unwrap_or_else(|_| file.to_path_buf())
}

/// The files of `dir` with their metadata; nothing if it cannot be read.
fn read_dir(dir: &Path) -> impl Iterator<Item = (PathBuf, std::fs::Metadata)> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| Some((entry.path(), entry.metadata().ok()?)))
}

fn age(meta: &std::fs::Metadata) -> Option<Duration> {
    meta.modified().ok()?.elapsed().ok()
}

/// Mark a compilation as just used: eviction goes by modification time.
fn mark_used(path: &Path) {
    let _ = std::fs::File::open(path).and_then(|f| f.set_modified(SystemTime::now()));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty component with a custom section holding `n`: a distinct
    /// content hash per `n`.
    fn component(n: u8) -> Vec<u8> {
        let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
        bytes.extend_from_slice(&[0, 3, 1, b'n', n]);
        bytes
    }

    fn sha(bytes: &[u8]) -> String {
        hex::encode(Sha256::digest(bytes))
    }

    fn entry_len(cache: &CompileCache, bytes: &[u8]) -> u64 {
        std::fs::metadata(cache.entry_path(&sha(bytes)))
            .unwrap()
            .len()
    }

    #[test]
    fn the_least_recently_used_compilation_goes_past_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let (a, b, c) = (component(1), component(2), component(3));
        let unbounded = CompileCache::open(dir.path(), &engine, u64::MAX).unwrap();
        unbounded.load_or_compile(&engine, &a).unwrap();
        let len = entry_len(&unbounded, &a);

        let cache = CompileCache::open(dir.path(), &engine, len * 5 / 2).unwrap();
        cache.load_or_compile(&engine, &b).unwrap();
        assert!(cache.holds(&sha(&a)) && cache.holds(&sha(&b)), "two fit");
        cache.load_or_compile(&engine, &a).unwrap();
        cache.load_or_compile(&engine, &c).unwrap();
        assert!(cache.holds(&sha(&a)), "used after b, so kept");
        assert!(!cache.holds(&sha(&b)), "the least recently used goes");
        assert!(cache.holds(&sha(&c)), "the one just written stays");
    }

    #[test]
    fn entries_others_could_have_written_are_not_loaded() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let cache = CompileCache::open(dir.path(), &engine, u64::MAX).unwrap();
        let bytes = component(1);
        cache.load_or_compile(&engine, &bytes).unwrap();
        let entry = cache.entry_path(&sha(&bytes));
        assert!(cache.load(&engine, &sha(&bytes)).is_some());
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(
            cache.load(&engine, &sha(&bytes)).is_none(),
            "world-writable"
        );
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o644)).unwrap();
        let real = entry.with_extension("real");
        std::fs::rename(&entry, &real).unwrap();
        std::os::unix::fs::symlink(&real, &entry).unwrap();
        assert!(cache.load(&engine, &sha(&bytes)).is_none(), "a symlink");
    }

    #[test]
    fn the_entry_just_written_stays_even_past_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let cache = CompileCache::open(dir.path(), &engine, 1).unwrap();
        cache.load_or_compile(&engine, &component(1)).unwrap();
        cache.load_or_compile(&engine, &component(2)).unwrap();
        assert!(!cache.holds(&sha(&component(1))));
        assert!(cache.holds(&sha(&component(2))));
        let reopened = CompileCache::open(dir.path(), &engine, 1).unwrap();
        assert!(
            !reopened.holds(&sha(&component(2))),
            "over the cap at the next open"
        );
    }

    #[test]
    fn a_recorded_file_loads_without_reading_until_it_or_its_compilation_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let tools = tempfile::tempdir().unwrap();
        let engine = Engine::default();
        let cache = CompileCache::open(dir.path(), &engine, u64::MAX).unwrap();
        let (one, two) = (tools.path().join("one.wasm"), tools.path().join("two.wasm"));
        for (file, n) in [(&one, 1), (&two, 2)] {
            std::fs::write(file, component(n)).unwrap();
            let compiled = cache.load_or_compile(&engine, &component(n)).unwrap();
            cache.record(file, FileStamp::of(file).unwrap(), &compiled.sha256);
        }
        let stamp = FileStamp::of(&one).unwrap();
        let loaded = cache
            .load_file(&engine, &one, stamp)
            .expect("the index hit");
        assert_eq!(loaded.sha256, sha(&component(1)));
        assert_eq!(
            std::fs::read_dir(dir.path().join(INDEX_DIR))
                .unwrap()
                .count(),
            2
        );

        std::fs::remove_file(&one).unwrap();
        std::fs::remove_file(cache.entry_path(&sha(&component(2)))).unwrap();
        CompileCache::open(dir.path(), &engine, u64::MAX).unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path().join(INDEX_DIR))
                .unwrap()
                .count(),
            0,
            "a deleted tool file's entry and a deleted compilation's entry are pruned"
        );
    }

    #[test]
    fn index_entries_without_a_path_still_load() {
        let sha256 = "a".repeat(64);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("entry");
        std::fs::write(&path, format!("12 345 678 {sha256}\n")).unwrap();
        let entry = IndexEntry::read(&path).expect("the old format");
        assert_eq!(
            (entry.stamp.as_str(), entry.sha256.as_str()),
            ("12 345 678", sha256.as_str())
        );
        assert_eq!(entry.file, None);
        std::fs::write(&path, "12 345 678 short\n").unwrap();
        assert!(IndexEntry::read(&path).is_none());
    }

    #[test]
    fn abandoned_writes_are_removed_once_an_hour_old() {
        let dir = tempfile::tempdir().unwrap();
        let (old, young) = (dir.path().join(".tmpOLD"), dir.path().join(".tmpNEW"));
        for path in [&old, &young] {
            std::fs::write(path, b"half").unwrap();
        }
        let two_hours_ago = SystemTime::now() - Duration::from_secs(7200);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .and_then(|f| f.set_modified(two_hours_ago))
            .unwrap();
        CompileCache::open(dir.path(), &Engine::default(), u64::MAX).unwrap();
        assert!(!old.exists());
        assert!(young.exists(), "another host may be writing it now");
    }
}
