//! Handing a workspace to the sandbox's uid: a host running as root owns
//! the files its components write, and the sandbox, running as an
//! unprivileged uid, could not change them. Before a call every entry is
//! made the sandbox user's (symlinks themselves, never what they point
//! at), up to a bound.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// The most entries a workspace may hold for `bash` to run in it.
pub(super) const MAX_ENTRIES: usize = 200_000;

/// Make every entry under `root`, `root` too, owned by `uid` and `gid`;
/// why not, naming the path, when one cannot be or there are too many.
pub(super) fn hand_over(root: &Path, uid: u32, gid: u32) -> Result<(), String> {
    let mut pending: Vec<PathBuf> = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(path) = pending.pop() {
        seen += 1;
        if seen > MAX_ENTRIES {
            return Err(format!(
                "the workspace holds more than {MAX_ENTRIES} entries; bash runs in smaller ones"
            ));
        }
        let metadata = std::fs::symlink_metadata(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if metadata.uid() != uid || metadata.gid() != gid {
            std::os::unix::fs::lchown(&path, Some(uid), Some(gid))
                .map_err(|e| format!("cannot hand {} to the sandbox: {e}", path.display()))?;
        }
        if metadata.is_dir() {
            let entries = std::fs::read_dir(&path)
                .map_err(|e| format!("cannot list {}: {e}", path.display()))?;
            for entry in entries {
                let entry = entry.map_err(|e| format!("cannot list {}: {e}", path.display()))?;
                pending.push(entry.path());
            }
        }
    }
    Ok(())
}
