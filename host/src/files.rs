//! Writing files that readers see either whole or not at all.

use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;

/// Write `path` through a temporary file in the same folder, fsynced and
/// renamed over it, then fsync the folder: a crash leaves the old file or the
/// new one, never a part.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
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
}
