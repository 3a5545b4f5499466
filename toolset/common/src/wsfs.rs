//! Direct `wasi:filesystem` access to the workspace, for the hot paths that
//! walk and read many files (`grep`, `glob`).
//!
//! Inside the sandbox every filesystem call is a host call, and `std::fs`
//! (through wasi-libc) spends several on each step: a directory read asks
//! for every entry's metadata hash, and `fs::read` opens, stats, creates a
//! stream and reads twice. Here a directory is one `read-directory` (the
//! entries' types come with it) and a file is one `open-at` plus one `read`.
//!
//! Only meaningful inside the sandbox: on another target the bindings are
//! stubs that panic when called.

use std::io;
use std::ops::ControlFlow;
use std::path::Path;

use toolhost_sdk::ToolError;
use toolhost_sdk::bindings::wasi::filesystem::preopens;
use toolhost_sdk::bindings::wasi::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags,
};

use crate::{NO_WORKSPACE, WORKSPACE, io_error, nul_in_prefix, skip_dir};

/// The most bytes one `read` asks for: the host's own cap on one read. A
/// shorter answer from a regular file means its end.
const READ_CHUNK: usize = 64 * 1024;

/// The workspace preopen.
pub struct Workspace {
    root: Descriptor,
}

/// What a path is, following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// Anything else.
    Other,
}

/// A regular file met by [`Workspace::walk_files`].
pub struct FoundFile<'a> {
    dir: &'a Descriptor,
    name: &'a str,
    path: &'a str,
    relative: &'a str,
}

impl FoundFile<'_> {
    /// Its path relative to the workspace root, with `/` separators.
    pub fn path(&self) -> &str {
        self.path
    }

    /// Its path relative to the directory being walked.
    pub fn relative(&self) -> &str {
        self.relative
    }

    /// Its file name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// Its content, or `None` when it is binary (a NUL byte in its first
    /// [`SNIFF_BYTES`](crate::SNIFF_BYTES)) or longer than `max_bytes`.
    pub fn read_text(&self, max_bytes: usize) -> Result<Option<Vec<u8>>, ToolError> {
        read_text_at(self.dir, self.name, max_bytes).map_err(|code| error(code, self.path))
    }
}

impl Workspace {
    /// The workspace preopen, or an error saying this call has none.
    pub fn open() -> Result<Self, ToolError> {
        preopens::get_directories()
            .into_iter()
            .find(|(_, path)| path == WORKSPACE)
            .map(|(root, _)| Self { root })
            .ok_or_else(|| ToolError::failed(NO_WORKSPACE))
    }

    /// What `relative` (workspace-relative, normalised, `""` for the root)
    /// is, following symlinks.
    pub fn kind(&self, relative: &str) -> Result<Kind, ToolError> {
        if relative.is_empty() {
            return Ok(Kind::Dir);
        }
        let stat = self
            .root
            .stat_at(PathFlags::SYMLINK_FOLLOW, relative)
            .map_err(|code| error(code, relative))?;
        Ok(match stat.type_ {
            DescriptorType::RegularFile => Kind::File,
            DescriptorType::Directory => Kind::Dir,
            _ => Kind::Other,
        })
    }

    /// The content of the file at `relative`, or `None` when it is binary or
    /// longer than `max_bytes` (see [`FoundFile::read_text`]).
    pub fn read_text(
        &self,
        relative: &str,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>, ToolError> {
        read_text_at(&self.root, relative, max_bytes).map_err(|code| error(code, relative))
    }

    /// Calls `visit` on every regular file under the directory `relative`,
    /// in path order (each directory's entries sorted by name, depth first),
    /// skipping `.git` directories and not following symlinks, until `visit`
    /// breaks. An unreadable subdirectory is left out; an unreadable
    /// `relative` is an error.
    pub fn walk_files(
        &self,
        relative: &str,
        mut visit: impl FnMut(&FoundFile<'_>) -> ControlFlow<()>,
    ) -> Result<(), ToolError> {
        let opened;
        let root = if relative.is_empty() {
            &self.root
        } else {
            opened = open_dir(&self.root, relative).map_err(|code| error(code, relative))?;
            &opened
        };
        let prefix = if relative.is_empty() {
            String::new()
        } else {
            format!("{relative}/")
        };
        let skip = prefix.len();
        let entries = list(root).map_err(|code| error(code, relative))?;

        // Depth first: a frame per open directory, with its entries left.
        let mut stack: Vec<(Option<Descriptor>, String, std::vec::IntoIter<Entry>)> =
            vec![(None, prefix, entries.into_iter())];
        while let Some((dir, prefix, entries)) = stack.last_mut() {
            let Some(entry) = entries.next() else {
                stack.pop();
                continue;
            };
            let dir = dir.as_ref().unwrap_or(root);
            let path = format!("{prefix}{}", entry.name);
            let kind = match entry.kind {
                DescriptorType::Unknown => match dir.stat_at(PathFlags::empty(), &entry.name) {
                    Ok(stat) => stat.type_,
                    Err(_) => continue,
                },
                kind => kind,
            };
            match kind {
                DescriptorType::RegularFile => {
                    let file = FoundFile {
                        dir,
                        name: &entry.name,
                        path: &path,
                        relative: &path[skip..],
                    };
                    if visit(&file).is_break() {
                        return Ok(());
                    }
                }
                DescriptorType::Directory if !skip_dir(&entry.name) => {
                    let Ok(sub) = open_dir(dir, &entry.name) else {
                        continue;
                    };
                    let Ok(entries) = list(&sub) else {
                        continue;
                    };
                    stack.push((Some(sub), format!("{path}/"), entries.into_iter()));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// One directory entry.
struct Entry {
    kind: DescriptorType,
    name: String,
}

/// A directory's entries, sorted by name.
fn list(dir: &Descriptor) -> Result<Vec<Entry>, ErrorCode> {
    let stream = dir.read_directory()?;
    let mut entries = Vec::new();
    while let Some(entry) = stream.read_directory_entry()? {
        entries.push(Entry {
            kind: entry.type_,
            name: entry.name,
        });
    }
    entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

fn open_dir(dir: &Descriptor, path: &str) -> Result<Descriptor, ErrorCode> {
    dir.open_at(
        PathFlags::SYMLINK_FOLLOW,
        path,
        OpenFlags::DIRECTORY,
        DescriptorFlags::READ,
    )
}

/// Reads a text file: one `open-at` and, for a file under 64 KiB, one
/// `read`. `None` for a binary file (judged on the first chunk) or one longer
/// than `max_bytes`, which is not read further.
fn read_text_at(
    dir: &Descriptor,
    path: &str,
    max_bytes: usize,
) -> Result<Option<Vec<u8>>, ErrorCode> {
    let file = dir.open_at(
        PathFlags::SYMLINK_FOLLOW,
        path,
        OpenFlags::empty(),
        DescriptorFlags::READ,
    )?;
    let mut bytes = Vec::new();
    loop {
        let (chunk, eof) = file.read(READ_CHUNK as u64, bytes.len() as u64)?;
        let short = chunk.len() < READ_CHUNK;
        if bytes.is_empty() && nul_in_prefix(&chunk) {
            return Ok(None);
        }
        bytes.extend_from_slice(&chunk);
        if bytes.len() > max_bytes {
            return Ok(None);
        }
        if eof || short {
            return Ok(Some(bytes));
        }
    }
}

/// A filesystem error code as a [`ToolError`] naming the workspace-relative
/// `path`, worded as [`io_error`] words it.
pub fn error(code: ErrorCode, path: &str) -> ToolError {
    use io::ErrorKind as K;
    let kind = match code {
        ErrorCode::NoEntry => K::NotFound,
        ErrorCode::Access | ErrorCode::NotPermitted => K::PermissionDenied,
        ErrorCode::ReadOnly => K::ReadOnlyFilesystem,
        ErrorCode::NotDirectory => K::NotADirectory,
        ErrorCode::IsDirectory => K::IsADirectory,
        ErrorCode::Exist => K::AlreadyExists,
        ErrorCode::NotEmpty => K::DirectoryNotEmpty,
        ErrorCode::Invalid => K::InvalidInput,
        ErrorCode::NameTooLong | ErrorCode::IllegalByteSequence => K::InvalidFilename,
        ErrorCode::InsufficientSpace | ErrorCode::Quota => K::StorageFull,
        ErrorCode::FileTooLarge => K::FileTooLarge,
        ErrorCode::Interrupted => K::Interrupted,
        _ => K::Other,
    };
    let full = Path::new(WORKSPACE).join(path);
    io_error(io::Error::new(kind, code.message()), &full)
}
