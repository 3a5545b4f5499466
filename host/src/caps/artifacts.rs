//! `toolhost:tool/artifacts`: a call saves files for the user as artifacts
//! of its session ([`crate::artifacts`] stores them).
//!
//! GrantCtx per tool (`artifacts = "read"` lists, `"write"` also saves); a
//! call whose effect is `read` only lists, and prompt and resource requests
//! (which belong to no session) are refused. A save's bytes are charged to
//! the call's host memory while they are written; `save-file` streams a
//! file from a directory the call has mounted, read beneath it as the tool
//! would. Each save is an `artifact.created` event of the session and is
//! counted in the call's receipt.

use std::path::PathBuf;
use std::sync::Arc;

use super::grant_ctx::GrantCtx;
use super::workspace::{DirAccess, Preopens};
use super::{CallScope, Capability, Grants, OUTSIDE_A_CALL, Outside};
use crate::artifacts::{Artifact, ArtifactError, NewArtifact, SessionArtifacts};
use crate::bindings::toolhost::tool::artifacts as wit;
use crate::session::{EventData, EventKind, Session};
use crate::usage::Meter;

/// What `grants` give a component importing `interface`, as `inspect`
/// shows it; `None` for another interface.
pub fn import_status(grants: &Grants, interface: &str) -> Option<String> {
    (interface == "toolhost:tool/artifacts").then(|| {
        match grants.artifacts {
            DirAccess::None => "NOT GRANTED (no artifacts)",
            DirAccess::Read => "granted: list artifacts",
            DirAccess::Write => "granted: save and list artifacts (list only for read calls)",
        }
        .into()
    })
}

/// Who saves, and where: what a call's artifacts need to know.
pub struct ArtifactsGrant {
    /// The call's session.
    pub session: Arc<Session>,
    /// The most bytes the session's artifacts may take together.
    pub budget: u64,
    /// Whether this call may save (a `write` grant, and not a read call).
    pub writable: bool,
    /// The call saving.
    pub call_id: String,
    /// The tool saving.
    pub tool: String,
    /// The directories the call has mounted, as the tool sees them
    /// (`/workspace`) beside where they are on the host.
    pub mounts: Vec<(&'static str, PathBuf)>,
    /// The call's meter.
    pub meter: Arc<Meter>,
}

/// One instance's artifacts: granted, or why not.
pub type ArtifactsCtx = GrantCtx<ArtifactsGrant>;

impl Capability for ArtifactsCtx {
    fn for_call(grants: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        Ok(match (scope.in_session, grants.artifacts) {
            (_, DirAccess::None) => Self::refused(
                "artifacts are not granted to this tool (`artifacts = \"write\"` in its \
                 [tools.<name>] saves them)",
            ),
            (None, _) => Self::refused("a prompt or resource request has no session"),
            (Some(call), access) => Self::granted(ArtifactsGrant {
                session: Arc::clone(call.session),
                budget: call.budget,
                writable: access == DirAccess::Write && !scope.read_only,
                call_id: call.call_id.to_string(),
                tool: call.tool.to_string(),
                mounts: Preopens::of(grants, scope)
                    .mounted()
                    .map(|(mount, dir)| (mount, dir.to_path_buf()))
                    .collect(),
                meter: scope.meter.clone(),
            }),
        })
    }

    fn outside_a_call(_: &Outside<'_>) -> anyhow::Result<Self> {
        Ok(Self::refused(OUTSIDE_A_CALL))
    }
}

impl ArtifactsCtx {
    fn writable(&self) -> Result<Arc<ArtifactsGrant>, String> {
        let grant = self.grant()?;
        if !grant.writable {
            return Err(format!(
                "`{}` may not save artifacts in this call: its grant is `artifacts = \"read\"` \
                 or the call is a read",
                grant.tool
            ));
        }
        Ok(grant)
    }
}

/// Where a path the tool names is on the host: the mounted directory and
/// the path beneath it.
fn locate(grant: &ArtifactsGrant, path: &str) -> Result<(PathBuf, String), String> {
    let named = |mount: &str| {
        grant
            .mounts
            .iter()
            .find(|(m, _)| *m == mount)
            .map(|(_, dir)| dir.clone())
    };
    let mounted = || {
        let names: Vec<&str> = grant.mounts.iter().map(|(m, _)| *m).collect();
        match names.is_empty() {
            true => "this call has no directory mounted".to_string(),
            false => format!("this call has mounted {}", names.join(" and ")),
        }
    };
    for (mount, dir) in &grant.mounts {
        if let Some(rest) = path.strip_prefix(mount).and_then(|r| r.strip_prefix('/')) {
            return Ok((dir.clone(), rest.to_string()));
        }
    }
    if !path.starts_with('/')
        && let Some(dir) = named(super::workspace::GUEST_PATH)
    {
        return Ok((dir, path.to_string()));
    }
    Err(format!(
        "{} is not a file under a directory the tool can read ({})",
        crate::shown::quoted(path),
        mounted()
    ))
}

/// A file read for an artifact, that stops once the call that saves it has
/// gone: a large copy does not run on past the call's deadline.
struct UntilAbandoned<'a> {
    file: std::fs::File,
    abandoned: &'a crate::blocking::Abandoned,
}

impl std::io::Read for UntilAbandoned<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.abandoned.is_set() {
            return Err(std::io::Error::other("the call saving it has ended"));
        }
        std::io::Read::read(&mut self.file, buf)
    }
}

/// Save on a blocking thread (the write fsyncs), then tell the session.
async fn save(
    grant: Arc<ArtifactsGrant>,
    new: NewArtifact,
    source: Source,
) -> Result<wit::Artifact, String> {
    let saving = grant.clone();
    let saved = crate::blocking::run(move |abandoned| {
        let artifacts = SessionArtifacts::new(&saving.session);
        let budget = saving.budget;
        match source {
            Source::Bytes(bytes, _charge) => {
                artifacts.save(new, &mut bytes.as_slice(), budget, None)
            }
            Source::File(dir, path) => {
                let file = crate::files::open_file_beneath(&dir, &path).map_err(|e| {
                    ArtifactError::Io(format!("cannot read {}: {e}", crate::shown::quoted(&path)))
                })?;
                let mut file = UntilAbandoned { file, abandoned };
                artifacts.save(new, &mut file, budget, None)
            }
        }
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    grant.meter.artifact_saved(saved.size);
    let session = grant.session.id();
    let mut event = saved.to_json(session);
    event["callId"] = serde_json::Value::String(grant.call_id.clone());
    grant
        .session
        .events()
        .emit(EventKind::ArtifactCreated, EventData::Json(event));
    Ok(to_wit(&saved, session))
}

/// What a save reads from.
enum Source {
    /// The guest's bytes, charged to the call's host memory until written.
    Bytes(Vec<u8>, crate::usage::Charge),
    /// A file beneath a mounted directory.
    File(PathBuf, String),
}

fn to_wit(artifact: &Artifact, session: &str) -> wit::Artifact {
    wit::Artifact {
        name: artifact.name.clone(),
        media_type: artifact.media_type.clone(),
        size: artifact.size,
        tags: artifact.tags.clone(),
        session: session.to_string(),
        created_at: artifact.created_at.to_rfc3339(),
        uri: artifact.uri(session),
    }
}

fn new_artifact(
    grant: &ArtifactsGrant,
    name: String,
    media_type: String,
    tags: Vec<String>,
) -> NewArtifact {
    NewArtifact {
        name,
        media_type,
        tags,
        call_id: grant.call_id.clone(),
        tool: grant.tool.clone(),
    }
}

impl wit::Host for ArtifactsCtx {
    async fn save(
        &mut self,
        name: String,
        media_type: String,
        data: Vec<u8>,
        tags: Vec<String>,
    ) -> Result<wit::Artifact, String> {
        let grant = self.writable()?;
        let charge = grant
            .meter
            .charge(data.len(), "an artifact's bytes")
            .map_err(|e| format!("{e}; save a large artifact from a file with `save-file`"))?;
        let new = new_artifact(&grant, name, media_type, tags);
        save(grant, new, Source::Bytes(data, charge)).await
    }

    async fn save_file(
        &mut self,
        name: String,
        path: String,
        media_type: String,
        tags: Vec<String>,
    ) -> Result<wit::Artifact, String> {
        let grant = self.writable()?;
        let (dir, beneath) = locate(&grant, &path)?;
        let new = new_artifact(&grant, name, media_type, tags);
        save(grant, new, Source::File(dir, beneath)).await
    }

    async fn list_artifacts(&mut self) -> Result<Vec<wit::Artifact>, String> {
        let grant = self.grant()?;
        let listing = grant.clone();
        let artifacts =
            crate::blocking::run(move |_| SessionArtifacts::new(&listing.session).list())
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
        let session = grant.session.id();
        Ok(artifacts.iter().map(|a| to_wit(a, session)).collect())
    }
}

/// Link `toolhost:tool/artifacts` into a linker whose store data holds an
/// [`ArtifactsCtx`].
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut ArtifactsCtx,
) -> wasmtime::Result<()> {
    wit::add_to_linker::<T, wasmtime::component::HasSelf<ArtifactsCtx>>(linker, get)
}
