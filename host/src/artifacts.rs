//! Artifacts: files a call leaves for the user, kept with its session.
//!
//! A session's artifacts are one directory (under the session's own
//! directory for a session the HTTP API made, so they outlive a restart
//! and go with the session; a scratch one for an ephemeral session). Each
//! artifact is its bytes in `<name>` and its record in `.meta/<name>.json`,
//! each written to a temporary file, fsynced and renamed, the record last:
//! a record only ever names bytes that are complete. A session's artifacts
//! together are held to a byte budget and a count, checked under the
//! session's artifacts lock before anything is written.

use std::fs::File;
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::session::Session;

/// The most artifacts one session may hold.
pub const MAX_ARTIFACTS: usize = 1000;
/// The longest artifact name, in characters.
pub const MAX_NAME_CHARS: usize = 128;
/// The most tags one artifact may have.
pub const MAX_TAGS: usize = 16;
/// The longest tag, in characters.
pub const MAX_TAG_CHARS: usize = 64;
/// The longest media type, in bytes.
pub const MAX_MEDIA_TYPE_BYTES: usize = 255;

/// Where the records live, inside a session's artifacts directory.
const META_DIR: &str = ".meta";

/// An artifact as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Artifact {
    /// Its name, unique in the session.
    pub name: String,
    /// Its IANA media type.
    pub media_type: String,
    /// Its size in bytes.
    pub size: u64,
    /// Labels for finding it.
    pub tags: Vec<String>,
    /// When it was saved.
    pub created_at: DateTime<Utc>,
    /// The call that saved it.
    pub call_id: String,
    /// The tool that saved it.
    pub tool: String,
}

impl Artifact {
    /// Its address for MCP clients, in session `session`.
    pub fn uri(&self, session: &str) -> String {
        uri(session, &self.name)
    }

    /// The artifact as surfaces show it: the record, its session and address.
    pub fn to_json(&self, session: &str) -> Value {
        json!({
            "name": self.name,
            "mediaType": self.media_type,
            "size": self.size,
            "tags": self.tags,
            "createdAt": self.created_at.to_rfc3339(),
            "callId": self.call_id,
            "tool": self.tool,
            "session": session,
            "uri": self.uri(session),
        })
    }
}

/// The address of artifact `name` of session `session`.
pub fn uri(session: &str, name: &str) -> String {
    format!("{URI_PREFIX}{session}/artifacts/{name}")
}

/// What every artifact's address starts with.
pub const URI_PREFIX: &str = "toolhost://sessions/";

/// The session id and artifact name an address names, if it is an
/// artifact's address.
pub fn parse_uri(uri: &str) -> Option<(&str, &str)> {
    let (session, name) = uri.strip_prefix(URI_PREFIX)?.split_once("/artifacts/")?;
    (!session.is_empty() && check_name(name).is_ok()).then_some((session, name))
}

/// Why an artifact was not saved or found.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// The name breaks the rules.
    #[error(
        "artifact name {} is invalid: use 1-{MAX_NAME_CHARS} characters of A-Z, a-z, 0-9, \
         `.`, `_` and `-`, not starting with `.`",
        crate::shown::quoted(.0)
    )]
    InvalidName(String),
    /// The media type is not `type/subtype`.
    #[error(
        "media type {} is invalid: expected `type/subtype` (e.g. `text/plain`), at most \
         {MAX_MEDIA_TYPE_BYTES} bytes",
        crate::shown::quoted(.0)
    )]
    InvalidMediaType(String),
    /// A tag breaks the rules.
    #[error(
        "{0}: at most {MAX_TAGS} tags, each 1-{MAX_TAG_CHARS} characters without control \
         characters"
    )]
    InvalidTag(String),
    /// Saving it would take the session past its bytes.
    #[error(
        "the session's artifacts would take {would} bytes, over its {limit} \
         ([limits] session_artifacts_mb)"
    )]
    OverBudget {
        /// What they would take.
        would: u64,
        /// The budget.
        limit: u64,
    },
    /// The session has as many artifacts as it may.
    #[error("the session has {MAX_ARTIFACTS} artifacts already, the most it may")]
    TooMany,
    /// No artifact of that name.
    #[error("the session has no artifact named {0:?}")]
    NotFound(String),
    /// The disk failed.
    #[error("{0}")]
    Io(String),
}

impl ArtifactError {
    fn io(what: impl std::fmt::Display, e: std::io::Error) -> Self {
        Self::Io(format!("{what}: {e}"))
    }
}

/// Check an artifact name.
pub fn check_name(name: &str) -> Result<(), ArtifactError> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    ok.then_some(())
        .ok_or_else(|| ArtifactError::InvalidName(name.to_string()))
}

fn check_media_type(media_type: &str) -> Result<(), ArtifactError> {
    let token = |t: &str| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
    };
    let ok = media_type.len() <= MAX_MEDIA_TYPE_BYTES
        && media_type
            .split_once('/')
            .is_some_and(|(kind, sub)| token(kind) && token(sub));
    ok.then_some(())
        .ok_or_else(|| ArtifactError::InvalidMediaType(media_type.to_string()))
}

fn check_tags(tags: &[String]) -> Result<(), ArtifactError> {
    if tags.len() > MAX_TAGS {
        return Err(ArtifactError::InvalidTag(format!("{} tags", tags.len())));
    }
    for tag in tags {
        if tag.is_empty()
            || tag.chars().count() > MAX_TAG_CHARS
            || tag.chars().any(char::is_control)
        {
            return Err(ArtifactError::InvalidTag(format!(
                "tag {}",
                crate::shown::quoted(tag)
            )));
        }
    }
    Ok(())
}

/// What a save is asked to store, besides its bytes.
#[derive(Debug, Clone)]
pub struct NewArtifact {
    /// Its name.
    pub name: String,
    /// Its media type.
    pub media_type: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// The call saving it.
    pub call_id: String,
    /// The tool saving it.
    pub tool: String,
}

impl NewArtifact {
    fn check(&self) -> Result<(), ArtifactError> {
        check_name(&self.name)?;
        check_media_type(&self.media_type)?;
        check_tags(&self.tags)
    }
}

/// One session's artifacts.
pub struct SessionArtifacts<'a> {
    session: &'a Session,
}

impl<'a> SessionArtifacts<'a> {
    /// `session`'s artifacts.
    pub fn new(session: &'a Session) -> Self {
        Self { session }
    }

    /// Every artifact, by name. Blocks on the disk.
    pub fn list(&self) -> Result<Vec<Artifact>, ArtifactError> {
        match self.session.artifacts_path() {
            Some(dir) => list(dir),
            None => Ok(Vec::new()),
        }
    }

    /// The artifact `name` and its bytes, open for reading. Blocks on the disk.
    pub fn open(&self, name: &str) -> Result<(Artifact, File), ArtifactError> {
        check_name(name).map_err(|_| ArtifactError::NotFound(name.to_string()))?;
        let dir = self
            .session
            .artifacts_path()
            .ok_or_else(|| ArtifactError::NotFound(name.to_string()))?;
        let record = read_record(&dir.join(META_DIR).join(record_file(name)))
            .ok_or_else(|| ArtifactError::NotFound(name.to_string()))?;
        // Beneath the folder, a regular file, never through a link out of
        // it (the folder may be a fleet's shared one).
        let file = crate::files::open_file_beneath(dir, name)
            .map_err(|e| ArtifactError::io(format!("cannot open artifact {name:?}"), e))?;
        Ok((record, file))
    }

    /// Save what `source` yields (at most `max_bytes` of it, else the save
    /// fails) as `new`, replacing an artifact of that name, with the
    /// session's artifacts held to `budget` bytes together. Blocks on the
    /// disk.
    pub fn save(
        &self,
        new: NewArtifact,
        source: &mut dyn Read,
        budget: u64,
        max_bytes: Option<u64>,
    ) -> Result<Artifact, ArtifactError> {
        new.check()?;
        let _one_at_a_time = self.session.artifacts_lock();
        let dir = self
            .session
            .artifacts()
            .map_err(|e| ArtifactError::io("cannot make the session's artifacts folder", e))?;
        let existing = list(dir)?;
        let others: Vec<&Artifact> = existing.iter().filter(|a| a.name != new.name).collect();
        if others.len() >= MAX_ARTIFACTS {
            return Err(ArtifactError::TooMany);
        }
        let used: u64 = others.iter().map(|a| a.size).sum();
        let room = budget.saturating_sub(used);
        let allowed = max_bytes.map_or(room, |max| max.min(room));
        let staged = Staged::new(dir)?;
        let size = staged.fill(source, allowed)?;
        if size > allowed {
            return Err(ArtifactError::OverBudget {
                would: used.saturating_add(size),
                limit: budget,
            });
        }
        staged.commit(&dir.join(&new.name))?;
        let record = Artifact {
            name: new.name,
            media_type: new.media_type,
            size,
            tags: new.tags,
            created_at: Utc::now(),
            call_id: new.call_id,
            tool: new.tool,
        };
        let meta = dir.join(META_DIR);
        std::fs::create_dir_all(&meta)
            .map_err(|e| ArtifactError::io("cannot make the artifacts' record folder", e))?;
        let text = serde_json::to_vec(&record).map_err(|e| ArtifactError::Io(e.to_string()))?;
        let staged = Staged::new(dir)?;
        staged.fill(&mut text.as_slice(), u64::MAX)?;
        staged.commit(&meta.join(record_file(&record.name)))?;
        sync_dir(dir);
        Ok(record)
    }
}

fn record_file(name: &str) -> String {
    format!("{name}.json")
}

fn read_record(path: &Path) -> Option<Artifact> {
    let text = std::fs::read(path).ok()?;
    match serde_json::from_slice(&text) {
        Ok(record) => Some(record),
        Err(e) => {
            tracing::warn!(
                "skipping the unreadable artifact record {}: {e}",
                path.display()
            );
            None
        }
    }
}

/// The artifacts recorded in `dir`, by name.
fn list(dir: &Path) -> Result<Vec<Artifact>, ArtifactError> {
    let entries = match std::fs::read_dir(dir.join(META_DIR)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ArtifactError::io("cannot list the session's artifacts", e)),
    };
    let mut artifacts: Vec<Artifact> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().ends_with(".json"))
        .take(MAX_ARTIFACTS + 1)
        .filter_map(|entry| {
            let record = read_record(&entry.path())?;
            // A record names its own file only: no path, no other name.
            let own = entry.file_name().to_str() == Some(record_file(&record.name).as_str());
            (own && check_name(&record.name).is_ok()).then_some(record)
        })
        .filter(|record| dir.join(&record.name).is_file())
        .collect();
    artifacts.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(artifacts)
}

/// A temporary file in the artifacts folder, renamed into place once
/// complete and fsynced; removed if it never is.
struct Staged {
    path: PathBuf,
    file: File,
}

impl Staged {
    fn new(dir: &Path) -> Result<Self, ArtifactError> {
        let path = dir.join(format!(".tmp-{}", uuid::Uuid::new_v4().simple()));
        let file = File::create(&path)
            .map_err(|e| ArtifactError::io("cannot write the session's artifacts folder", e))?;
        Ok(Self { path, file })
    }

    /// Copy `source` in, stopping once it is past `limit` bytes; the
    /// number of bytes copied (more than `limit` when the source was).
    fn fill(&self, source: &mut dyn Read, limit: u64) -> Result<u64, ArtifactError> {
        let mut file = &self.file;
        let copied = std::io::copy(&mut source.take(limit.saturating_add(1)), &mut file)
            .map_err(|e| ArtifactError::io("cannot write the artifact", e))?;
        file.flush()
            .map_err(|e| ArtifactError::io("cannot write the artifact", e))?;
        Ok(copied)
    }

    fn commit(self, to: &Path) -> Result<(), ArtifactError> {
        self.file
            .sync_all()
            .map_err(|e| ArtifactError::io("cannot sync the artifact", e))?;
        std::fs::rename(&self.path, to)
            .map_err(|e| ArtifactError::io("cannot store the artifact", e))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        // Gone already once committed.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Make the renames in `dir` durable; a failure only weakens durability.
fn sync_dir(dir: &Path) {
    for dir in [dir.to_path_buf(), dir.join(META_DIR)] {
        if let Ok(handle) = File::open(&dir) {
            let _ = handle.sync_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::SessionSpec;

    fn new(name: &str) -> NewArtifact {
        NewArtifact {
            name: name.into(),
            media_type: "text/plain".into(),
            tags: vec!["report".into()],
            call_id: "call_1".into(),
            tool: "t".into(),
        }
    }

    fn session(dir: &Path) -> Session {
        Session::open(SessionSpec {
            artifacts: Some(dir.to_path_buf()),
            ..SessionSpec::default()
        })
        .unwrap()
    }

    #[test]
    fn saves_list_open_and_replace() {
        let dir = tempfile::tempdir().unwrap();
        let session = session(dir.path());
        let artifacts = SessionArtifacts::new(&session);
        let budget = 100;
        let saved = artifacts
            .save(new("b.txt"), &mut &b"hello"[..], budget, None)
            .unwrap();
        assert_eq!((saved.size, saved.tags.clone()), (5, vec!["report".into()]));
        artifacts
            .save(new("a.txt"), &mut &b"x"[..], budget, None)
            .unwrap();
        artifacts
            .save(new("b.txt"), &mut &b"bye"[..], budget, None)
            .unwrap();
        let names: Vec<_> = artifacts
            .list()
            .unwrap()
            .into_iter()
            .map(|a| (a.name, a.size))
            .collect();
        assert_eq!(names, [("a.txt".into(), 1), ("b.txt".into(), 3)]);
        let (record, mut file) = artifacts.open("b.txt").unwrap();
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        assert_eq!(
            (record.media_type.as_str(), text.as_str()),
            ("text/plain", "bye")
        );
        assert!(matches!(
            artifacts.open("c.txt"),
            Err(ArtifactError::NotFound(_))
        ));
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    /// The artifacts folder may be a fleet's shared one: an artifact's file
    /// swapped for a link out of it, or a record naming another file, is
    /// never what a download reads.
    #[test]
    fn a_link_planted_for_an_artifact_reads_nothing_outside() {
        let dir = tempfile::tempdir().unwrap();
        let session = session(dir.path());
        let artifacts = SessionArtifacts::new(&session);
        artifacts
            .save(new("a.txt"), &mut &b"mine"[..], 100, None)
            .unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "secret").unwrap();
        std::fs::remove_file(dir.path().join("a.txt")).unwrap();
        std::os::unix::fs::symlink(&secret, dir.path().join("a.txt")).unwrap();
        assert!(matches!(artifacts.open("a.txt"), Err(ArtifactError::Io(_))));
        let mut record: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.path().join(META_DIR).join("a.txt.json")).unwrap(),
        )
        .unwrap();
        record["name"] = serde_json::json!("../x");
        std::fs::write(
            dir.path().join(META_DIR).join("a.txt.json"),
            record.to_string(),
        )
        .unwrap();
        assert!(artifacts.list().unwrap().is_empty());
    }

    #[test]
    fn the_budget_counts_every_artifact_but_the_one_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let session = session(dir.path());
        let artifacts = SessionArtifacts::new(&session);
        let budget = 10;
        artifacts
            .save(new("a"), &mut &[0u8; 6][..], budget, None)
            .unwrap();
        let over = artifacts
            .save(new("b"), &mut &[0u8; 5][..], budget, None)
            .unwrap_err();
        assert!(
            matches!(
                over,
                ArtifactError::OverBudget {
                    would: 11,
                    limit: 10
                }
            ),
            "{over}"
        );
        // Replacing `a` frees its 6 bytes first.
        artifacts
            .save(new("a"), &mut &[0u8; 10][..], budget, None)
            .unwrap();
        let capped = artifacts
            .save(new("c"), &mut &[0u8; 3][..], budget, Some(2))
            .unwrap_err();
        assert!(
            matches!(capped, ArtifactError::OverBudget { .. }),
            "{capped}"
        );
        assert_eq!(
            artifacts.list().unwrap().len(),
            1,
            "nothing half-saved is listed"
        );
    }

    #[test]
    fn names_media_types_and_tags_are_checked() {
        for bad in ["", ".hidden", "a/b", "../x", "a b", &"x".repeat(129)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in ["report.md", "A-1_b.tar.gz", &"x".repeat(128)] {
            assert!(check_name(good).is_ok(), "{good:?}");
        }
        for bad in ["text", "text/", "/plain", "text/pl ain", "a/b/c"] {
            assert!(check_media_type(bad).is_err(), "{bad:?}");
        }
        assert!(check_media_type("application/vnd.api+json").is_ok());
        assert!(check_tags(&vec!["t".to_string(); 17]).is_err());
        assert!(check_tags(&["a\nb".to_string()]).is_err());
        assert!(check_tags(&[String::new()]).is_err());
    }

    #[test]
    fn addresses_round_trip() {
        let address = uri("ses_1", "report.md");
        assert_eq!(address, "toolhost://sessions/ses_1/artifacts/report.md");
        assert_eq!(parse_uri(&address), Some(("ses_1", "report.md")));
        assert_eq!(parse_uri("toolhost://sessions/ses_1/artifacts/../x"), None);
        assert_eq!(parse_uri("counter://x"), None);
    }
}
