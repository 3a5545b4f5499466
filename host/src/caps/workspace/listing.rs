//! `read-directory`, streamed.
//!
//! wasmtime-wasi reads a whole directory into one list before the guest sees
//! its first entry: a directory of 300 000 files is ~18 MiB the host holds
//! per listing, read in one uninterrupted syscall loop on a runtime worker.
//! A [`Listing`] instead holds its own descriptor on the directory and reads
//! the next batch of entries (one `getdents`, at most ~24 KiB) only when the
//! guest asks, so the work is spread over the guest's calls, each short,
//! and the guest's epoch yields and deadline apply between them.

use rustix::fs::{Dir, FileType, Mode, OFlags};
use wasmtime_wasi::p2::bindings::filesystem::types::{DescriptorType, DirectoryEntry, ErrorCode};

use crate::usage::{Charge, Meter};

/// What one open listing costs the host: the entry buffer `getdents` fills
/// (rustix grows it to at most 1024 `linux_dirent64` headers) and the rest
/// of the stream.
pub const LISTING_BYTES: usize = 32 << 10;

/// One directory listing in progress: the guest's
/// `directory-entry-stream`.
pub struct Listing {
    entries: Dir,
    _charge: Charge,
}

impl Listing {
    /// Start listing `dir` from its first entry, charged to `meter`.
    pub fn open(dir: &std::fs::File, meter: &std::sync::Arc<Meter>) -> Result<Self, ErrorCode> {
        let charge = meter
            .charge(LISTING_BYTES, "a directory listing")
            .map_err(|_| ErrorCode::InsufficientMemory)?;
        // A descriptor of its own, so each listing starts at the beginning
        // and none moves another's position.
        let own = rustix::fs::openat(
            dir,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io_error)?;
        Ok(Self {
            entries: Dir::new(own).map_err(io_error)?,
            _charge: charge,
        })
    }

    /// The next entry, other than `.` and `..`; `None` at the end.
    pub fn next_entry(&mut self) -> Result<Option<DirectoryEntry>, ErrorCode> {
        loop {
            let Some(entry) = self.entries.read() else {
                return Ok(None);
            };
            let entry = entry.map_err(io_error)?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = std::str::from_utf8(name).map_err(|_| ErrorCode::IllegalByteSequence)?;
            return Ok(Some(DirectoryEntry {
                type_: descriptor_type(entry.file_type()),
                name: name.to_owned(),
            }));
        }
    }
}

fn io_error(errno: rustix::io::Errno) -> ErrorCode {
    ErrorCode::from(std::io::Error::from(errno))
}

/// The WASI type of an entry, from the type the directory records (no
/// `stat`: `unknown` where the filesystem records none, as wasmtime-wasi).
fn descriptor_type(ty: FileType) -> DescriptorType {
    match ty {
        FileType::RegularFile => DescriptorType::RegularFile,
        FileType::Directory => DescriptorType::Directory,
        FileType::Symlink => DescriptorType::SymbolicLink,
        FileType::Fifo => DescriptorType::Fifo,
        FileType::Socket => DescriptorType::Socket,
        FileType::CharacterDevice => DescriptorType::CharacterDevice,
        FileType::BlockDevice => DescriptorType::BlockDevice,
        FileType::Unknown => DescriptorType::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::HostBudget;

    fn names(listing: &mut Listing) -> Vec<String> {
        let mut names = Vec::new();
        while let Some(entry) = listing.next_entry().unwrap() {
            names.push(entry.name);
        }
        names.sort();
        names
    }

    #[test]
    fn lists_every_entry_but_dot_and_dot_dot_each_time_from_the_start() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "").unwrap();
        std::fs::create_dir(dir.path().join("b")).unwrap();
        let handle = std::fs::File::open(dir.path()).unwrap();
        let meter = Meter::new(HostBudget::default());

        let mut first = Listing::open(&handle, &meter).unwrap();
        assert_eq!(names(&mut first), ["a", "b"]);
        assert_eq!(first.next_entry().unwrap().map(|e| e.name), None);
        let mut second = Listing::open(&handle, &meter).unwrap();
        let kinds: Vec<_> = std::iter::from_fn(|| second.next_entry().unwrap())
            .map(|e| (e.name, e.type_ == DescriptorType::Directory))
            .collect();
        assert_eq!(kinds.len(), 2);
        assert!(kinds.contains(&("b".to_string(), true)));
    }

    #[test]
    fn an_open_listing_is_charged_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let handle = std::fs::File::open(dir.path()).unwrap();
        let meter = Meter::new(HostBudget {
            bytes: 2 * LISTING_BYTES,
            ..HostBudget::default()
        });
        let first = Listing::open(&handle, &meter).unwrap();
        let _second = Listing::open(&handle, &meter).unwrap();
        assert!(matches!(
            Listing::open(&handle, &meter),
            Err(ErrorCode::InsufficientMemory)
        ));
        drop(first);
        assert!(Listing::open(&handle, &meter).is_ok());
    }
}
