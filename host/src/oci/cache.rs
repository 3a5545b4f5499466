//! The content-addressed cache of pulled components: `sha256/<hex>` under
//! the state directory, each file written whole (a temporary file, synced,
//! then renamed) only after its bytes matched their digest, and checked
//! against it again whenever it is read; beside them, the signatures a
//! check of a manifest found (`signatures/<hex>.json`), verified again
//! whenever they are used.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::Digest;
use super::signature::{MAX_PAYLOAD_BYTES, MAX_SIGNATURES, Signed};

/// The most bytes of kept signatures read for one manifest.
const MAX_KEPT_SIGNATURE_BYTES: u64 = MAX_SIGNATURES as u64 * 2 * (MAX_PAYLOAD_BYTES + 4096);

/// Where pulled components are kept.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The cache in `dir` (made when first written).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// Where the blob of `digest` is kept.
    pub fn path(&self, digest: &Digest) -> PathBuf {
        self.dir.join("sha256").join(digest.hex())
    }

    /// The blob of `digest`, read and checked against it; `None` when it is
    /// not cached, an error when what is kept does not match (it is
    /// removed, so the next pull fetches it again).
    pub fn read(&self, digest: &Digest, max_bytes: u64) -> Result<Option<Vec<u8>>, String> {
        let path = self.path(digest);
        let bytes = match read_bounded(&path, max_bytes) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("reading {}: {e}", path.display())),
        };
        if Digest::of(&bytes) != *digest {
            let _ = std::fs::remove_file(&path);
            return Err(format!(
                "the cached {} does not match its digest {digest} (removed)",
                path.display()
            ));
        }
        Ok(Some(bytes))
    }

    /// Keep `bytes` (already checked to be what they were asked for) as
    /// the blob of their digest; where.
    pub fn put(&self, bytes: &[u8]) -> Result<PathBuf, String> {
        let digest = Digest::of(bytes);
        let mut incoming = self.incoming().map_err(|e| format!("the cache: {e}"))?;
        incoming
            .write(bytes)
            .map_err(|e| format!("writing {digest}: {e}"))?;
        incoming.keep(self, &digest, bytes.len() as u64)
    }

    /// The signatures an earlier check of `manifest` kept (none when there
    /// are none, or what is kept is unreadable). Each is verified again
    /// before it counts.
    pub fn signatures(&self, manifest: &Digest) -> Vec<Signed> {
        read_bounded(&self.signatures_path(manifest), MAX_KEPT_SIGNATURE_BYTES)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Keep `signatures` as those of `manifest` (replacing any kept).
    pub fn keep_signatures(&self, manifest: &Digest, signatures: &[Signed]) -> Result<(), String> {
        let bytes = serde_json::to_vec(signatures).map_err(|e| e.to_string())?;
        let path = self.signatures_path(manifest);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("keeping the signatures of {manifest}: {e}"))?;
        }
        crate::files::write_atomically(&path, &bytes)
            .map_err(|e| format!("keeping the signatures of {manifest}: {e:#}"))
    }

    fn signatures_path(&self, manifest: &Digest) -> PathBuf {
        self.dir
            .join("signatures")
            .join(format!("{}.json", manifest.hex()))
    }

    /// A new blob being written, to be [`Incoming::keep`]t once whole.
    pub fn incoming(&self) -> std::io::Result<Incoming> {
        let dir = self.dir.join("sha256");
        std::fs::create_dir_all(&dir)?;
        Ok(Incoming {
            file: tempfile::NamedTempFile::new_in(&dir)?,
            hasher: <sha2::Sha256 as sha2::Digest>::new(),
            written: 0,
        })
    }
}

/// A blob on its way into the cache: hashed as it is written, dropped
/// (and its temporary file removed) unless kept.
pub struct Incoming {
    file: tempfile::NamedTempFile,
    hasher: sha2::Sha256,
    written: u64,
}

impl Incoming {
    /// Write the next bytes.
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        sha2::Digest::update(&mut self.hasher, bytes);
        self.written += bytes.len() as u64;
        self.file.write_all(bytes)
    }

    /// How many bytes were written.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Keep it as the blob of `digest` when its bytes are that digest's,
    /// exactly `size` of them; otherwise it is dropped and the error says
    /// why.
    pub fn keep(self, cache: &Cache, digest: &Digest, size: u64) -> Result<PathBuf, String> {
        let actual = format!(
            "sha256:{}",
            hex::encode(sha2::Digest::finalize(self.hasher))
        );
        if self.written != size {
            return Err(format!(
                "the blob {digest} is {} bytes, not the {size} its manifest says",
                self.written
            ));
        }
        if actual != digest.as_str() {
            return Err(format!("the blob said to be {digest} is {actual}"));
        }
        self.file
            .as_file()
            .sync_all()
            .map_err(|e| format!("writing {digest}: {e}"))?;
        let path = cache.path(digest);
        self.file
            .persist(&path)
            .map_err(|e| format!("keeping {digest}: {}", e.error))?;
        Ok(path)
    }
}

/// The file at `path`, when it is a regular file of at most `max` bytes.
fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let file = std::fs::File::open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() || metadata.len() > max {
        return Err(std::io::Error::other(format!(
            "not a regular file of at most {max} bytes"
        )));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other(format!("over {max} bytes")));
    }
    Ok(bytes)
}
