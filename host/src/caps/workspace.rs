//! Files: the session's workspace directory, preopened as `/workspace`.
//!
//! `wasi:filesystem` is served by wasmtime-wasi with cap-std semantics: no
//! `..`, absolute path or symlink resolves outside the preopen. What this
//! module decides is whether there is a preopen at all and with which
//! permissions: a `read` grant, or any call whose effect is `read`, gets it
//! read-only. It also builds the rest of the call's WASI context: captured
//! stdio, the granted environment, and `wasi:sockets` denied outright.

use std::collections::BTreeMap;
use std::path::Path;

use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::stdio::Capture;
use crate::config::WorkspaceAccess;

/// Where tools see the workspace.
pub const GUEST_PATH: &str = "/workspace";

/// The permissions a call gets on the workspace: the grant, narrowed to
/// read-only when the call's effect is `read`. `None` means no preopen.
pub fn permissions(grant: WorkspaceAccess, read_only_call: bool) -> Option<FsPerms> {
    match grant {
        WorkspaceAccess::None => None,
        WorkspaceAccess::Read => Some(FsPerms::ReadOnly),
        WorkspaceAccess::Write if read_only_call => Some(FsPerms::ReadOnly),
        WorkspaceAccess::Write => Some(FsPerms::ReadWrite),
    }
}

/// The WASI context of one call.
pub struct WasiSetup<'a> {
    /// The workspace directory and the permissions on it, if any.
    pub workspace: Option<(&'a Path, FsPerms)>,
    /// Environment variables given to the tool.
    pub env: &'a BTreeMap<String, String>,
    /// Where the tool's stdout goes.
    pub stdout: Capture,
    /// Where the tool's stderr goes.
    pub stderr: Capture,
}

impl WasiSetup<'_> {
    /// Build the context. Sockets are always denied; stdin is empty.
    pub fn build(self) -> anyhow::Result<WasiCtx> {
        let mut builder = WasiCtxBuilder::new();
        builder
            .stdout(self.stdout)
            .stderr(self.stderr)
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .socket_addr_check(|_, _| Box::pin(async { false }))
            // Filesystem calls run on the calling worker instead of a hop
            // to tokio's blocking pool: ~85 µs less per call, which is most
            // of a search over many small files (bench toolset_grep). A call
            // is one guest on one worker of a multi-thread runtime, and a
            // local file operation blocks it briefly.
            .allow_blocking_current_thread(true);
        for (name, value) in self.env {
            builder.env(name, value);
        }
        if let Some((dir, perms)) = self.workspace {
            builder
                .preopened_dir(dir, GUEST_PATH, perms)
                .map_err(|e| anyhow::anyhow!("cannot open workspace {}: {e}", dir.display()))?;
        }
        Ok(builder.build())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_calls_never_get_write_access() {
        assert_eq!(permissions(WorkspaceAccess::None, false), None);
        assert_eq!(permissions(WorkspaceAccess::None, true), None);
        assert_eq!(
            permissions(WorkspaceAccess::Read, false),
            Some(FsPerms::ReadOnly)
        );
        assert_eq!(
            permissions(WorkspaceAccess::Write, true),
            Some(FsPerms::ReadOnly)
        );
        assert_eq!(
            permissions(WorkspaceAccess::Write, false),
            Some(FsPerms::ReadWrite)
        );
    }
}
