//! Files a call leaves for the user: artifacts of its session
//! (`toolhost:tool/artifacts`), the SDK page's `ctx.artifacts`.
//!
//! The operator grants them: `artifacts = "write"` in the tool's
//! `[tools.<name>]` saves and lists, `"read"` only lists; a read call only
//! lists. The host fills in the session. Clients download an artifact over
//! the HTTP API, read it as an MCP resource (its [`Artifact::uri`]), and see
//! an `artifact.created` event.
//!
//! ```no_run
//! use toolhost_sdk::artifacts;
//! # fn run() -> Result<(), toolhost_sdk::artifacts::Error> {
//! let saved = artifacts::save("report.md", "text/markdown", "# Report\n", &["report"])?;
//! artifacts::save_file("build.tar.gz", "/workspace/out/build.tar.gz", "application/gzip", &[])?;
//! println!("{} is at {}", saved.name, saved.uri);
//! # Ok(()) }
//! ```

use std::fmt;

use crate::bindings::toolhost::tool::artifacts as wit;

/// An artifact as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// Its name, unique in the session.
    pub name: String,
    /// Its media type.
    pub media_type: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its tags.
    pub tags: Vec<String>,
    /// The session it belongs to.
    pub session: String,
    /// When it was saved (RFC 3339).
    pub created_at: String,
    /// Its address for MCP clients (`toolhost://sessions/<id>/artifacts/<name>`).
    pub uri: String,
}

/// Why the host did not save or list: not granted, a read call, a bad
/// name, media type or tag, or the session's bytes used up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "artifacts: {}", self.0)
    }
}

impl std::error::Error for Error {}

impl From<wit::Artifact> for Artifact {
    fn from(a: wit::Artifact) -> Self {
        Self {
            name: a.name,
            media_type: a.media_type,
            size: a.size,
            tags: a.tags,
            session: a.session,
            created_at: a.created_at,
            uri: a.uri,
        }
    }
}

fn tags(tags: &[&str]) -> Vec<String> {
    tags.iter().map(|t| t.to_string()).collect()
}

/// Save `data` as the artifact `name` of the call's session, replacing one
/// of that name.
pub fn save(
    name: &str,
    media_type: &str,
    data: impl AsRef<[u8]>,
    tag_list: &[&str],
) -> Result<Artifact, Error> {
    wit::save(name, media_type, data.as_ref(), &tags(tag_list))
        .map(Artifact::from)
        .map_err(Error)
}

/// Save the file at `path` (under `/workspace` or `/state`, or relative to
/// the workspace) as the artifact `name`; the host reads it, so a large
/// file never passes through the tool's memory.
pub fn save_file(
    name: &str,
    path: &str,
    media_type: &str,
    tag_list: &[&str],
) -> Result<Artifact, Error> {
    wit::save_file(name, path, media_type, &tags(tag_list))
        .map(Artifact::from)
        .map_err(Error)
}

/// The session's artifacts, by name.
pub fn list() -> Result<Vec<Artifact>, Error> {
    wit::list_artifacts()
        .map(|all| all.into_iter().map(Artifact::from).collect())
        .map_err(Error)
}
