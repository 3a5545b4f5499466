//! The compile cache on disk: serialized compilations named by the
//! component's SHA-256 and a key of the engine that made them (its
//! compatibility hash, given by the caller), an index from tool files to the
//! content they had and the tool names they gave, and a size cap kept by
//! removing the least recently used compilations. It knows no engine: the engine serializes what it stores
//! and deserializes the entries it hands out.
//!
//! Only files this cache wrote are ever handed out: by default, files this
//! user owns in its own folder. Servers may share the compilations in a
//! folder they all mount (`[state] shared_compile_cache`): there each entry
//! carries an HMAC-SHA-256 under the cluster key, checked on the bytes that
//! are then deserialized, so a file nobody with the key wrote is never
//! loaded. Entries are written whole (temporary file, rename), a reader that
//! loses a race with another host's eviction compiles again, and in a shared
//! folder eviction leaves the entries a live version keeps touching.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::config::state::SharedCompileCache;
use crate::files::FileStamp;
use anyhow::Context as _;
use hmac::{Hmac, Mac as _};
use sha2::{Digest, Sha256};

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

/// How often a host touches the shared entries its live versions use, and
/// how recently touched an entry must be for eviction to leave it.
pub(crate) const LIVE_TOUCH_INTERVAL: Duration = Duration::from_secs(600);
const LIVE_WINDOW: Duration = Duration::from_secs(3 * 600);

/// What an entry in a shared folder is authenticated with.
const TAG_BYTES: usize = 32;

/// One compile cache folder, for one engine.
pub(crate) struct CompileCache {
    /// Where compilations are: the cache's own folder, or the shared one.
    dir: PathBuf,
    /// Where the file index is: always this host's own (tool files' paths
    /// and stamps mean nothing on another machine).
    index_dir: PathBuf,
    engine_key: String,
    max_bytes: u64,
    opened: SystemTime,
    /// The cluster key, when `dir` is shared.
    key: Option<Arc<[u8]>>,
}

/// A cached compilation ready to deserialize.
pub(crate) struct Entry {
    /// Its file.
    pub path: PathBuf,
    /// Its bytes, read and authenticated, when the cache is shared: load
    /// these, not the file, which another host may replace meanwhile.
    pub verified: Option<Vec<u8>>,
}

impl CompileCache {
    /// Open (or create) the cache at `dir` for the compilations of the
    /// engine `engine_key` names, its compilations in `shared`'s folder
    /// when given, and tidy it: remove abandoned writes and keep it under
    /// `max_bytes`.
    pub(crate) fn open(
        dir: &Path,
        engine_key: &str,
        max_bytes: u64,
        shared: Option<&SharedCompileCache>,
    ) -> anyhow::Result<Self> {
        let entries = shared.map_or(dir, |shared| shared.dir.as_path());
        for dir in [dir, entries] {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create cache dir {}", dir.display()))?;
        }
        let cache = Self {
            dir: entries.to_path_buf(),
            index_dir: dir.join(INDEX_DIR),
            engine_key: engine_key.to_string(),
            max_bytes,
            opened: SystemTime::now(),
            key: shared.map(|shared| shared.key.clone()),
        };
        cache.tidy(None);
        Ok(cache)
    }

    /// Whether the compilation of the content `sha256` is cached.
    pub(crate) fn holds(&self, sha256: &str) -> bool {
        self.entry_path(sha256).exists()
    }

    /// The compilation of the content `sha256`, if it is cached and this
    /// cache wrote it: a file only this user could have written, or, in a
    /// shared folder, bytes whose tag the cluster key made. Call
    /// [`Self::used`] once it is loaded, [`Self::discard`] if it cannot be.
    pub(crate) fn entry(&self, sha256: &str) -> Option<Entry> {
        let path = self.entry_path(sha256);
        if !path.exists() {
            return None;
        }
        let Some(key) = &self.key else {
            if let Err(why) = owned(&path) {
                tracing::warn!(path = %path.display(), "not loading a cache entry: {why}; compiling again");
                return None;
            }
            return Some(Entry {
                path,
                verified: None,
            });
        };
        let mut bytes = std::fs::read(&path).ok()?;
        let Some(body) = bytes.len().checked_sub(TAG_BYTES) else {
            tracing::warn!(path = %path.display(), "not loading a shared cache entry: it is too short to hold a tag; compiling again");
            return None;
        };
        let tag = bytes.split_off(body);
        if self.mac(key, sha256, &bytes).verify_slice(&tag).is_err() {
            tracing::warn!(
                path = %path.display(),
                "not loading a shared cache entry: its tag does not match (written without \
                 this cluster key, or changed since); compiling again"
            );
            return None;
        }
        Some(Entry {
            path,
            verified: Some(bytes),
        })
    }

    /// The HMAC of `bytes` as the compilation of `sha256` for this engine.
    fn mac(&self, key: &[u8], sha256: &str, bytes: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256>>::new_from_slice(key).expect("HMAC takes keys of any length");
        for part in [
            b"toolhost compile cache v1".as_slice(),
            self.engine_key.as_bytes(),
            sha256.as_bytes(),
        ] {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part);
        }
        mac.update(bytes);
        mac
    }

    /// Mark the shared compilations of `sha256s` as used now, so no host's
    /// eviction removes them for [`LIVE_WINDOW`]: a host calls it every
    /// [`LIVE_TOUCH_INTERVAL`] with what its loaded versions run.
    pub(crate) fn keep(&self, sha256s: &std::collections::BTreeSet<String>) {
        for sha256 in sha256s {
            self.used(&self.entry_path(sha256));
        }
    }

    /// Mark the compilation at `entry` as just used: eviction goes by
    /// modification time.
    pub(crate) fn used(&self, entry: &Path) {
        let _ = std::fs::File::open(entry).and_then(|f| f.set_modified(SystemTime::now()));
    }

    /// Remove the compilation at `entry`, which could not be loaded (cut
    /// short, or from another wasmtime) for `why`.
    pub(crate) fn discard(&self, entry: &Path, why: &dyn std::fmt::Display) {
        if entry.exists() {
            tracing::warn!(path = %entry.display(), "discarding unusable cache entry: {why}");
            let _ = std::fs::remove_file(entry);
        }
    }

    /// Store `serialized`, the compilation of the content `sha256`, then
    /// keep the cache under its cap (never removing this entry).
    pub(crate) fn store(&self, sha256: &str, serialized: &[u8]) {
        let path = self.entry_path(sha256);
        let written = match &self.key {
            None => crate::files::write_atomically(&path, serialized),
            Some(key) => {
                let tag = self.mac(key, sha256, serialized).finalize().into_bytes();
                crate::files::write_atomically(&path, &[serialized, tag.as_slice()].concat())
            }
        };
        match written {
            Ok(()) => self.tidy(Some(&path)),
            Err(e) => tracing::warn!(path = %path.display(), "cannot write compile cache: {e:#}"),
        }
    }

    /// The content the tool file at `file` held when [`Self::record`] last
    /// saw it with `stamp`, if the stamp is still that: the file need not
    /// be read.
    pub(crate) fn recorded(&self, file: &Path, stamp: FileStamp) -> Option<String> {
        let entry = IndexEntry::read(&self.index_path(file))?;
        (entry.stamp == stamp.to_line()).then_some(entry.sha256)
    }

    /// Record that the tool file at `file`, as of `stamp`, holds the
    /// content `sha256`. The names it gave are kept if its content is the
    /// same as the entry's.
    pub(crate) fn record(&self, file: &Path, stamp: FileStamp, sha256: &str) {
        let path = self.index_path(file);
        let names = IndexEntry::read(&path)
            .filter(|entry| entry.sha256 == sha256)
            .and_then(|entry| entry.names);
        self.write_entry(
            &path,
            &IndexEntry {
                stamp: stamp.to_line(),
                sha256: sha256.to_string(),
                file: canonical(file).to_str().map(PathBuf::from),
                names,
            },
        );
    }

    /// The tool names the file at `file` gave when a load last recorded
    /// them, if its stamp is still the one recorded.
    pub(crate) fn recorded_names(&self, file: &Path, stamp: FileStamp) -> Option<Vec<String>> {
        let entry = IndexEntry::read(&self.index_path(file))?;
        (entry.stamp == stamp.to_line()).then_some(entry.names?)
    }

    /// Record the tool names the file at `file` gave, as of `stamp`, beside
    /// its content; nothing if the index holds another stamp for it.
    pub(crate) fn record_names(&self, file: &Path, stamp: FileStamp, names: &[String]) {
        let path = self.index_path(file);
        let Some(entry) = IndexEntry::read(&path).filter(|e| e.stamp == stamp.to_line()) else {
            return;
        };
        if entry.names.as_deref() != Some(names) {
            self.write_entry(
                &path,
                &IndexEntry {
                    names: Some(names.to_vec()),
                    ..entry
                },
            );
        }
    }

    fn write_entry(&self, path: &Path, entry: &IndexEntry) {
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(anyhow::Error::from)
            .and_then(|()| crate::files::write_atomically(path, entry.to_text().as_bytes()));
        if let Err(e) = written {
            tracing::warn!(path = %path.display(), "cannot record the file's stamp: {e:#}");
        }
    }

    fn entry_path(&self, sha256: &str) -> PathBuf {
        self.dir.join(format!("{sha256}-{}.cwasm", self.engine_key))
    }

    fn index_path(&self, file: &Path) -> PathBuf {
        let key = hex::encode(Sha256::digest(
            canonical(file).as_os_str().as_encoded_bytes(),
        ));
        self.index_dir.join(&key[..32])
    }

    /// Remove abandoned temporary files; while the compilations take more
    /// than the cap, remove the least recently used (never `keep`, the one
    /// just written); then drop index entries whose compilation or tool
    /// file is gone.
    fn tidy(&self, keep: Option<&Path>) {
        let index_dir = &self.index_dir;
        let mut compilations = Vec::new();
        for entry in read_dir(&self.dir).chain(read_dir(index_dir)) {
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
                // In a shared folder, another host may be running what it
                // touched lately.
                let live =
                    self.key.is_some() && used.elapsed().is_ok_and(|since| since < LIVE_WINDOW);
                if live || Some(path.as_path()) == keep || std::fs::remove_file(path).is_err() {
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
        self.prune_index(index_dir);
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
/// content then, its path (when UTF-8; entries older than pruning have
/// none), by which an entry of a deleted file is pruned, and the tool names
/// it gave (once a load recorded them; tool names hold no space).
struct IndexEntry {
    stamp: String,
    sha256: String,
    file: Option<PathBuf>,
    names: Option<Vec<String>>,
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
            names: lines
                .next()
                .and_then(|l| l.strip_prefix("names:"))
                .map(|l| l.split_whitespace().map(str::to_string).collect()),
        })
    }

    fn to_text(&self) -> String {
        let file = self
            .file
            .as_deref()
            .and_then(Path::to_str)
            .unwrap_or_default();
        let mut text = format!("{} {}\n{file}\n", self.stamp, self.sha256);
        if let Some(names) = &self.names {
            text.push_str(&format!("names:{}\n", names.join(" ")));
        }
        text
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

#[cfg(test)]
mod tests;
