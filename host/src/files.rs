//! Writing files that readers see either whole or not at all, telling
//! whether a file changed without reading it, and opening a file a tool
//! names as the tool would reach it.

use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};

/// Create `dir` (and its missing parents) readable by the owner only, or
/// make an existing one so: the state folder holds key-value data, session
/// workspaces and compiled code.
pub(crate) fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot make {} private (mode 0700)", dir.display()))
}

/// Write `path` through a temporary file in the same folder, fsynced and
/// renamed over it, then fsync the folder: a crash leaves the old file or the
/// new one, never a part.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .with_context(|| format!("{} has no parent folder", path.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

/// Remove `path` and fsync its folder, so the removal survives a crash;
/// `false` when there was no such file.
pub fn remove_durably(path: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    }
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(true)
}

/// What a file looked like when it was read: a rewrite (a new size, time
/// or inode: `toolhost build` and most tools replace files by renaming) gives
/// another stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStamp {
    len: u64,
    modified: std::time::SystemTime,
    inode: u64,
}

impl FileStamp {
    /// The file's stamp now, or `None` if it cannot be read.
    pub(crate) fn of(path: &Path) -> Option<Self> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Some(Self {
            len: meta.len(),
            modified: meta.modified().ok()?,
            inode,
        })
    }

    /// The stamp as one line of text, for an index on disk.
    pub(crate) fn to_line(self) -> String {
        let nanos = self
            .modified
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{} {nanos} {}", self.len, self.inode)
    }
}

/// The names (as UTF-8) of what folder `dir` holds; none when it does not
/// exist.
pub(crate) fn entry_names(dir: &Path) -> anyhow::Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
    };
    Ok(entries
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect())
}

/// The JSON file `path` read as a `T` (`what` names it in errors), or
/// `None` when there is no such file.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &str,
) -> anyhow::Result<Option<T>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not {what}", path.display()))?;
    Ok(Some(value))
}

/// Open the regular file at `path` under the host directory `root` for
/// reading, as a tool inside it would reach it: `..`, absolute paths and
/// symlinks never resolve outside `root`, and nothing but a regular file is
/// opened (never blocking on a FIFO). For the host reading a file a tool
/// names, e.g. an artifact saved from the workspace. Needs `openat2` (Linux
/// 5.6).
pub(crate) fn open_file_beneath(
    root: &std::path::Path,
    path: &str,
) -> std::io::Result<std::fs::File> {
    let dir = rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let opened = rustix::fs::openat2(
        &dir,
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    )?;
    let stat = rustix::fs::fstat(&opened)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    Ok(std::fs::File::from(opened))
}

#[cfg(test)]
mod tests {
    #[test]
    fn atomic_write_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.cwasm");
        super::write_atomically(&path, b"abc").unwrap();
        super::write_atomically(&path, b"defg").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"defg");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_file_replaced_by_rename_gets_a_new_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.wasm");
        super::write_atomically(&path, b"abc").unwrap();
        let first = super::FileStamp::of(&path).unwrap();
        assert_eq!(super::FileStamp::of(&path), Some(first));
        super::write_atomically(&path, b"xyz").unwrap();
        let second = super::FileStamp::of(&path).unwrap();
        assert_ne!(first, second);
        assert_ne!(first.to_line(), second.to_line());
        assert_eq!(super::FileStamp::of(&dir.path().join("none")), None);
    }

    #[test]
    fn the_state_dir_is_made_private_new_or_existing() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("a/.toolhost");
        super::create_private_dir(&fresh).unwrap();
        assert_eq!(mode(&fresh), 0o700);
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        super::create_private_dir(&open).unwrap();
        assert_eq!(mode(&open), 0o700);
    }
}
