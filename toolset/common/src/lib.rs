//! Shared helpers of the built-in toolset: workspace path resolution, io
//! error messages, text detection, line counting, direct workspace access
//! for walking ([`wsfs`]) and HTML-to-text extraction ([`html`]).

#![warn(missing_docs)]

pub mod html;
pub mod wsfs;

use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toolhost_sdk::ToolError;

pub use memchr;

/// Where the host preopens the session's workspace inside the sandbox.
pub const WORKSPACE: &str = "/workspace";

/// How many leading bytes are scanned for a NUL byte to call a file binary.
pub const SNIFF_BYTES: usize = 8 * 1024;

/// Lexically normalises `path` to a workspace-relative path with `/`
/// separators; the root is `""`.
///
/// `path` is relative to the workspace root (`"."` and `""` are the root),
/// or absolute under [`WORKSPACE`]. `.` and `..` are resolved without
/// touching the disk; a path that leaves the workspace is refused.
pub fn normalize(path: &str) -> Result<String, ToolError> {
    let outside = || {
        ToolError::invalid_input(format!(
            "path {path:?} is outside the workspace: give a path relative to the workspace \
             root, or an absolute path under {WORKSPACE}"
        ))
    };
    if path.contains('\0') {
        return Err(ToolError::invalid_input(format!(
            "path {path:?} contains a NUL byte"
        )));
    }
    let relative = match path.strip_prefix('/') {
        Some(rest) => match rest.strip_prefix(&WORKSPACE[1..]) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
            _ => return Err(outside()),
        },
        None => path,
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(outside());
                }
            }
            name => parts.push(name),
        }
    }
    Ok(parts.join("/"))
}

/// Resolves an input path to the absolute path inside the sandbox
/// (`/workspace/...`), refusing anything outside the workspace (see
/// [`normalize`]).
pub fn resolve(path: &str) -> Result<PathBuf, ToolError> {
    let relative = normalize(path)?;
    let mut resolved = PathBuf::from(WORKSPACE);
    if !relative.is_empty() {
        resolved.push(relative);
    }
    Ok(resolved)
}

/// Whether `path` (as returned by [`resolve`]) is the workspace root.
pub fn is_root(path: &Path) -> bool {
    path == Path::new(WORKSPACE)
}

/// How a path is shown to the model: relative to the workspace root with
/// `/` separators, the root itself as `"."`.
pub fn display(path: &Path) -> String {
    match path.strip_prefix(WORKSPACE) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_string(),
        Ok(relative) => relative.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// The [`display`] form of the input `path` without touching the disk, for
/// dry-run results; the input as given when it is refused.
pub fn display_input(path: &str) -> String {
    match normalize(path) {
        Ok(relative) if relative.is_empty() => ".".to_string(),
        Ok(relative) => relative,
        Err(_) => path.to_string(),
    }
}

/// Turns an io error on `path` into a [`ToolError`] whose message names the
/// path and says what went wrong in words a model can act on.
pub fn io_error(err: io::Error, path: &Path) -> ToolError {
    use io::ErrorKind as K;
    let shown = display(path);
    match err.kind() {
        K::NotFound if no_workspace() => ToolError::failed(NO_WORKSPACE),
        K::NotFound => ToolError::invalid_input(format!("no such file or directory: {shown}")),
        K::PermissionDenied => ToolError::failed(format!(
            "permission denied: {shown} (the workspace is read-only for this call? a symlink \
             leading outside the workspace is refused too)"
        )),
        K::ReadOnlyFilesystem => ToolError::failed(format!(
            "read-only file system: {shown} (the workspace is read-only for this call?)"
        )),
        K::NotADirectory => {
            ToolError::invalid_input(format!("not a directory: a parent of {shown} is a file"))
        }
        K::IsADirectory => ToolError::invalid_input(format!("{shown} is a directory")),
        K::AlreadyExists => ToolError::invalid_input(format!("already exists: {shown}")),
        K::DirectoryNotEmpty => ToolError::invalid_input(format!("directory not empty: {shown}")),
        K::InvalidFilename | K::InvalidInput => {
            ToolError::invalid_input(format!("invalid path {shown}: {err}"))
        }
        K::StorageFull | K::QuotaExceeded | K::FileTooLarge => {
            ToolError::failed(format!("no room to write {shown}: {err}"))
        }
        K::Interrupted | K::TimedOut | K::WouldBlock => {
            ToolError::transient(format!("{shown}: {err}"))
        }
        _ => ToolError::failed(format!("{shown}: {err}")),
    }
}

/// The message when the call has no workspace preopen.
pub const NO_WORKSPACE: &str = "this call has no workspace: the tool is not granted access to it";

/// Whether the sandbox has no workspace at all (asked only when a path was
/// not found, to tell "no such file" from "no workspace granted").
fn no_workspace() -> bool {
    cfg!(target_os = "wasi") && !Path::new(WORKSPACE).is_dir()
}

/// Adds the path to an io result: `fs::read(&path).at(&path)?`.
pub trait AtPath<T> {
    /// Maps the error with [`io_error`].
    fn at(self, path: &Path) -> Result<T, ToolError>;
}

impl<T> AtPath<T> for io::Result<T> {
    fn at(self, path: &Path) -> Result<T, ToolError> {
        self.map_err(|err| io_error(err, path))
    }
}

/// Checks a numeric input against its documented range (the host checks the
/// schema too; this keeps a direct call honest).
pub fn check_range(name: &str, value: usize, min: usize, max: usize) -> Result<usize, ToolError> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(ToolError::invalid_input(format!(
            "`{name}` is {value}: expected {min} to {max}"
        )))
    }
}

/// Whether the first [`SNIFF_BYTES`] of `bytes` hold a NUL byte, the cheap
/// test for a binary file.
pub fn nul_in_prefix(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(SNIFF_BYTES)]).is_some()
}

/// Whether a file's content is binary: a NUL byte in its first
/// [`SNIFF_BYTES`], or not valid UTF-8.
pub fn is_binary(bytes: &[u8]) -> bool {
    nul_in_prefix(bytes) || std::str::from_utf8(bytes).is_err()
}

/// How many `\n` bytes `bytes` holds.
pub fn count_newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

/// The byte range of the line holding `offset`, without its `\n` (nor a
/// `\r` before it).
pub fn line_bounds(bytes: &[u8], offset: usize) -> Range<usize> {
    let offset = offset.min(bytes.len());
    let start = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |i| i + 1);
    let mut end = memchr::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |i| offset + i);
    if end > start && bytes[end - 1] == b'\r' {
        end -= 1;
    }
    start..end
}

/// The 1-based line numbers of the byte offsets `offsets` (ascending) in
/// `bytes`, counting newlines once across the whole list.
pub fn line_numbers(bytes: &[u8], offsets: &[usize]) -> Vec<usize> {
    let mut line = 1;
    let mut counted = 0;
    offsets
        .iter()
        .map(|&offset| {
            let offset = offset.clamp(counted, bytes.len());
            line += count_newlines(&bytes[counted..offset]);
            counted = offset;
            line
        })
        .collect()
}

/// `text` cut to at most `max_bytes` bytes on a char boundary, and whether
/// it was cut.
pub fn cut_bytes(text: &str, max_bytes: usize) -> (&str, bool) {
    if text.len() <= max_bytes {
        return (text, false);
    }
    (&text[..text.floor_char_boundary(max_bytes)], true)
}

/// `text` cut to at most `max_chars` characters, and whether it was cut.
pub fn cut_chars(text: &str, max_chars: usize) -> (&str, bool) {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => (&text[..end], true),
        None => (text, false),
    }
}

/// Whether a walk skips a directory of this name: `.git` (the shared rule
/// of `grep` and `glob`).
pub fn skip_dir(name: &str) -> bool {
    name == ".git"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_relative_paths() {
        for (input, expected) in [
            ("", ""),
            (".", ""),
            ("./", ""),
            ("a/b", "a/b"),
            ("a//b/./c/", "a/b/c"),
            ("a/../b", "b"),
            ("a/b/../..", ""),
            ("/workspace", ""),
            ("/workspace/", ""),
            ("/workspace/x/y", "x/y"),
            ("/workspace/x/../z", "z"),
        ] {
            assert_eq!(normalize(input).unwrap(), expected, "{input:?}");
        }
        assert_eq!(resolve(".").unwrap(), PathBuf::from("/workspace"));
        assert_eq!(
            resolve("src/a.rs").unwrap(),
            PathBuf::from("/workspace/src/a.rs")
        );
    }

    #[test]
    fn refuses_paths_outside_the_workspace() {
        for input in [
            "..",
            "../x",
            "a/../../x",
            "a/b/../../../workspace",
            "/",
            "/etc/passwd",
            "/workspacex",
            "/workspace/..",
            "/workspace/../etc",
            "/tmp/workspace/a",
        ] {
            let err = normalize(input).unwrap_err();
            assert!(matches!(err, ToolError::InvalidInput(_)), "{input:?}");
            assert!(
                err.message().contains("outside the workspace")
                    && err.message().contains(&format!("{input:?}")),
                "{err}"
            );
        }
        assert!(normalize("a\0b").is_err());
    }

    #[test]
    fn displays_workspace_relative() {
        assert_eq!(display(Path::new("/workspace")), ".");
        assert_eq!(display(Path::new("/workspace/a/b.rs")), "a/b.rs");
        assert_eq!(display_input("./a/../b/"), "b");
        assert_eq!(display_input("/workspace"), ".");
        assert_eq!(display_input("../x"), "../x");
        assert!(is_root(&resolve("a/..").unwrap()));
    }

    #[test]
    fn maps_io_errors() {
        let path = Path::new("/workspace/a.txt");
        let err = io_error(io::ErrorKind::NotFound.into(), path);
        assert_eq!(
            err,
            ToolError::invalid_input("no such file or directory: a.txt")
        );
        let err = io_error(io::ErrorKind::PermissionDenied.into(), path);
        assert!(
            matches!(&err, ToolError::Failed(m) if m.starts_with("permission denied: a.txt (the workspace is read-only")),
            "{err}"
        );
        let err: Result<(), _> = Err(io::Error::other("boom")).at(path);
        assert_eq!(err, Err(ToolError::failed("a.txt: boom")));
    }

    #[test]
    fn detects_binary() {
        assert!(!is_binary(b""));
        assert!(!is_binary("héllo\nworld".as_bytes()));
        assert!(is_binary(b"abc\0def"));
        assert!(is_binary(&[0x66, 0xff, 0x66]));
        let mut late_nul = vec![b'a'; SNIFF_BYTES];
        late_nul.push(0);
        assert!(!nul_in_prefix(&late_nul));
        assert!(nul_in_prefix(b"\0"));
    }

    #[test]
    fn counts_lines() {
        let text = b"one\ntwo\r\nthree\n\nfive";
        assert_eq!(count_newlines(text), 4);
        assert_eq!(count_newlines(b""), 0);
        assert_eq!(line_bounds(text, 0), 0..3);
        assert_eq!(line_bounds(text, 5), 4..7);
        assert_eq!(line_bounds(text, 9), 9..14);
        assert_eq!(line_bounds(text, 15), 15..15);
        assert_eq!(line_bounds(text, text.len()), 16..20);
        assert_eq!(
            line_numbers(text, &[0, 2, 4, 9, 15, 16, 19]),
            vec![1, 1, 2, 3, 4, 5, 5]
        );
    }

    #[test]
    fn cuts_on_char_boundaries() {
        assert_eq!(cut_bytes("héllo", 2), ("h", true));
        assert_eq!(cut_bytes("héllo", 3), ("hé", true));
        assert_eq!(cut_bytes("héllo", 6), ("héllo", false));
        assert_eq!(cut_chars("héllo", 2), ("hé", true));
        assert_eq!(cut_chars("héllo", 5), ("héllo", false));
        assert_eq!(
            check_range("limit", 0, 1, 10).unwrap_err().message(),
            "`limit` is 0: expected 1 to 10"
        );
    }

    #[test]
    fn skips_git_directories() {
        assert!(skip_dir(".git"));
        assert!(!skip_dir(".github") && !skip_dir("git"));
    }
}
