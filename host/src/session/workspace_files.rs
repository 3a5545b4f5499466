//! A session's workspace as the surfaces show it, read-only: its files
//! listed (symlinks listed, never followed; bounded in count and depth),
//! and one opened for download as a tool inside it would reach it (never
//! outside the workspace, never a FIFO or device).

use std::ffi::CString;
use std::fs::File;
use std::os::fd::OwnedFd;

use chrono::{DateTime, Utc};
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use serde::Serialize;

use super::Session;

/// The most entries one listing returns.
pub const MAX_LISTED: usize = 10_000;

/// The deepest folder a listing goes into.
const MAX_DEPTH: usize = 32;

/// One entry of a workspace.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceEntry {
    /// Its path under the workspace, `/`-separated.
    pub path: String,
    /// `file`, `dir`, `symlink` or `other` (a FIFO, socket or device).
    pub kind: &'static str,
    /// Its size in bytes (a file's).
    pub size: u64,
    /// When it last changed.
    pub modified: Option<DateTime<Utc>>,
}

/// A workspace's entries, by path.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WorkspaceListing {
    /// The entries, folders before what they hold.
    pub entries: Vec<WorkspaceEntry>,
    /// Whether there were more than [`MAX_LISTED`] (or some lay deeper
    /// than the listing goes).
    pub truncated: bool,
}

/// Every entry of `session`'s workspace; empty when it has none yet.
/// Each folder is opened through its parent's descriptor and never through
/// a symlink, so a tool swapping a folder for a link while it is listed
/// cannot lead the listing out of the workspace. Blocks on the disk.
pub fn list(session: &Session) -> std::io::Result<WorkspaceListing> {
    let mut listing = WorkspaceListing::default();
    if let Some(root) = session.workspace_path() {
        // Never through a link (a stored session's folder may be a fleet's
        // shared one).
        let dir = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        walk(&dir, "", 0, &mut listing)?;
    }
    Ok(listing)
}

fn walk(
    dir: &OwnedFd,
    prefix: &str,
    depth: usize,
    listing: &mut WorkspaceListing,
) -> std::io::Result<()> {
    // Read no more names than the listing has room for (and one to know
    // there were more): a folder of millions costs no more than a full
    // listing. Those read are listed sorted.
    let room = MAX_LISTED.saturating_sub(listing.entries.len());
    let mut names: Vec<CString> = Dir::read_from(dir)?
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_owned())
        .filter(|name| name.as_bytes() != b"." && name.as_bytes() != b"..")
        .take(room.saturating_add(1))
        .collect();
    names.sort();
    for name in names {
        if listing.entries.len() >= MAX_LISTED {
            listing.truncated = true;
            return Ok(());
        }
        // Gone since it was listed: skipped.
        let Ok(stat) = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let kind = match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => "file",
            FileType::Directory => "dir",
            FileType::Symlink => "symlink",
            _ => "other",
        };
        let shown = format!("{prefix}{}", name.to_string_lossy());
        listing.entries.push(WorkspaceEntry {
            path: shown.clone(),
            kind,
            size: if kind == "file" {
                stat.st_size.max(0) as u64
            } else {
                0
            },
            modified: DateTime::from_timestamp(stat.st_mtime, 0),
        });
        if kind != "dir" {
            continue;
        }
        if depth + 1 >= MAX_DEPTH {
            listing.truncated = true;
            continue;
        }
        // A folder swapped for a symlink since its `stat` is refused here
        // (`O_NOFOLLOW`), and one removed meanwhile is skipped.
        let Ok(child) = rustix::fs::openat(
            dir,
            &name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        // A folder that cannot be read (gone meanwhile) is listed, not its files.
        let _ = walk(&child, &format!("{shown}/"), depth + 1, listing);
    }
    Ok(())
}

/// The regular file at `path` in `session`'s workspace, opened for
/// reading as a tool inside would reach it (`..`, absolute paths and
/// symlinks never lead out), or `None` when there is no such file there.
/// Blocks on the disk.
pub fn open(session: &Session, path: &str) -> Option<File> {
    let root = session.workspace_path()?;
    crate::files::open_file_beneath(root, path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_without_following_symlinks_and_opens_only_files_inside() {
        let session = Session::ephemeral().unwrap();
        let root = session.workspace().unwrap().to_path_buf();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(root.join("README"), "hi").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "no").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("escape")).unwrap();

        let listed = list(&session).unwrap();
        let shown: Vec<(&str, &str)> = listed
            .entries
            .iter()
            .map(|e| (e.path.as_str(), e.kind))
            .collect();
        assert_eq!(
            shown,
            [
                ("README", "file"),
                ("escape", "symlink"),
                ("src", "dir"),
                ("src/main.rs", "file")
            ]
        );
        assert!(!listed.truncated);

        assert!(open(&session, "src/main.rs").is_some());
        for refused in ["escape/secret", "../README", "/etc/passwd", "src", "nope"] {
            assert!(open(&session, refused).is_none(), "{refused}");
        }
    }

    #[test]
    fn a_listing_stops_at_its_cap() {
        let session = Session::ephemeral().unwrap();
        let root = session.workspace().unwrap().to_path_buf();
        for i in 0..MAX_LISTED + 5 {
            std::fs::File::create(root.join(format!("f{i:05}"))).unwrap();
        }
        let listed = list(&session).unwrap();
        assert_eq!(listed.entries.len(), MAX_LISTED);
        assert!(listed.truncated);
    }
}
