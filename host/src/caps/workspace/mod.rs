//! Files: the session's workspace directory, preopened as `/workspace`,
//! and the host's state root, shared by every session, as `/state`.
//!
//! `wasi:filesystem` is served by wasmtime-wasi with cap-std semantics: no
//! `..`, absolute path or symlink resolves outside a preopen. What this
//! module decides is whether each preopen is there at all and with which
//! permissions: a `read` grant, or any call whose effect is `read`, gets it
//! read-only. It also builds the rest of the call's WASI context: captured
//! stdio, the granted environment, and `wasi:sockets` denied outright.
//!
//! Two `wasi:filesystem/types` functions are served here instead of by
//! wasmtime-wasi, because its versions can stall the host: `read-directory`
//! streams ([`listing`]) and `open-at` refuses special files
//! ([`special_files`]). Both take a host-wide slot before they open a
//! descriptor, given back when the guest drops it ([`open_files`]).

mod grant;
pub mod listing;
pub mod open_files;
pub mod special_files;

use std::path::Path;
use std::sync::Arc;

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceType};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorFlags, ErrorCode, Host as FsHost, HostDescriptor, OpenFlags, PathFlags,
};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

pub use self::grant::{DirAccess, Env};
use self::listing::Listing;
use self::open_files::{FileSlots, OpenFiles};
use super::log::TraceLog;
use super::stdio::Capture;
use super::{CallScope, Capability, Grants, Outside};
use crate::usage::Meter;

/// Whether filesystem calls run on the worker that runs the guest (see
/// [`WasiSetup::build`]); descriptors this module opens itself agree.
const BLOCK_CURRENT_THREAD: bool = true;

/// Where tools see the workspace.
pub const GUEST_PATH: &str = "/workspace";
/// Where tools see the host's state root.
pub const STATE_GUEST_PATH: &str = "/state";

/// What `grants` give a component importing `interface` of
/// `wasi:filesystem`, `wasi:cli/environment` or `wasi:sockets`, as `inspect`
/// shows it; `None` for another interface.
pub fn import_status(grants: &Grants, interface: &str) -> Option<String> {
    if interface.starts_with("wasi:sockets/") {
        return Some("always denied".into());
    }
    if interface.starts_with("wasi:filesystem/") {
        let granted: Vec<String> = [("workspace", grants.workspace), ("state", grants.state)]
            .into_iter()
            .filter_map(|(dir, access)| match access {
                DirAccess::None => None,
                DirAccess::Read => Some(format!("{dir} read-only")),
                DirAccess::Write => Some(format!("{dir} read-write (read-only for read calls)")),
            })
            .collect();
        return Some(match granted.is_empty() {
            true => "NOT GRANTED (no workspace or state)".into(),
            false => format!("granted: {}", granted.join("; ")),
        });
    }
    (interface == "wasi:cli/environment").then(|| {
        if grants.env.is_empty() {
            "served: empty environment".into()
        } else {
            format!("granted: {} variables", grants.env.len())
        }
    })
}

/// The permissions a call gets on the workspace: the grant, narrowed to
/// read-only when the call's effect is `read`. `None` means no preopen.
pub fn permissions(grant: DirAccess, read_only_call: bool) -> Option<FsPerms> {
    match grant {
        DirAccess::None => None,
        DirAccess::Read => Some(FsPerms::ReadOnly),
        DirAccess::Write if read_only_call => Some(FsPerms::ReadOnly),
        DirAccess::Write => Some(FsPerms::ReadWrite),
    }
}

/// A directory mounted and the permissions on it, if it is mounted.
pub type Preopen<'a> = Option<(&'a Path, FsPerms)>;

/// The directories one call mounts, each with the permissions on it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Preopens<'a> {
    /// The session's workspace at `/workspace`, if it is mounted.
    pub workspace: Preopen<'a>,
    /// The host's state root at `/state`, if it is mounted.
    pub state: Preopen<'a>,
}

impl<'a> Preopens<'a> {
    /// What `grants` mount for a call in `scope`.
    pub(crate) fn of(grants: &Grants, scope: &CallScope<'a>) -> Self {
        Self {
            workspace: scope
                .workspace
                .zip(permissions(grants.workspace, scope.read_only)),
            state: permissions(grants.state, scope.read_only).map(|p| (scope.state_root, p)),
        }
    }

    /// Each directory a call may mount: what it is, where the tool sees it,
    /// and where it is on the host with the permissions, if it is mounted.
    fn each(&self) -> [(&'static str, &'static str, Preopen<'a>); 2] {
        [
            ("workspace", GUEST_PATH, self.workspace),
            ("state root", STATE_GUEST_PATH, self.state),
        ]
    }

    /// Each mounted directory, as the tool sees it beside where it is.
    pub fn mounted(&self) -> impl Iterator<Item = (&'static str, &'a Path)> {
        self.each()
            .into_iter()
            .filter_map(|(_, mount, preopen)| Some((mount, preopen?.0)))
    }
}

impl Capability for WasiCtx {
    fn for_call(grants: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        WasiSetup {
            preopens: Preopens::of(grants, scope),
            env: &grants.env,
            stdout: scope.stdout.clone(),
            stderr: scope.stderr.clone(),
        }
        .build()
    }

    fn outside_a_call(outside: &Outside<'_>) -> anyhow::Result<Self> {
        WasiSetup {
            preopens: Preopens::default(),
            env: &Env::default(),
            stdout: outside.stdout.clone(),
            stderr: outside.stderr.clone(),
        }
        .build()
    }
}

impl Capability for OpenFiles {
    fn for_call(_: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        Ok(Self::new(scope.file_slots.clone()))
    }

    /// No file can be opened: nothing is mounted.
    fn outside_a_call(_: &Outside<'_>) -> anyhow::Result<Self> {
        Ok(Self::new(FileSlots::with_cap(0)))
    }
}

/// The WASI context of one call.
pub struct WasiSetup<'a> {
    /// The directories mounted, with the permissions on each.
    pub preopens: Preopens<'a>,
    /// Environment variables given to the tool.
    pub env: &'a Env,
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
            // A larger request traps (the interface has no error to give):
            // random bytes are made on the worker, uncounted.
            .max_random_size(MAX_RANDOM_BYTES)
            // Filesystem calls run on the calling worker instead of a hop
            // to tokio's blocking pool: ~85 µs less per call, which is most
            // of a search over many small files (bench toolset_grep). A call
            // is one guest on one worker of a multi-thread runtime, and a
            // local file operation blocks it briefly: the two that could
            // block it long (a whole listing, opening a FIFO) are served
            // by this module instead.
            .allow_blocking_current_thread(BLOCK_CURRENT_THREAD);
        for (name, value) in self.env.iter() {
            builder.env(name, value);
        }
        for (what, mount, preopen) in self.preopens.each() {
            if let Some((dir, perms)) = preopen {
                builder
                    .preopened_dir(dir, mount, perms)
                    .map_err(|e| anyhow::anyhow!("cannot open {what} {}: {e}", dir.display()))?;
            }
        }
        Ok(builder.build())
    }
}

/// The most bytes one `descriptor.write` writes (the rest is the guest's
/// next write): as much as one read returns.
pub const MAX_WRITE_BYTES: usize = 64 << 10;

/// The most random bytes one `get-random-bytes` call may ask for.
pub const MAX_RANDOM_BYTES: u64 = 1 << 20;

/// What the workspace's host functions reach in a Store.
pub struct FilesView<'a> {
    /// wasmtime-wasi's filesystem state and the call's resource table.
    pub files: WasiFilesystemCtxView<'a>,
    /// The files the instance holds open, with their host-wide slots.
    pub open: &'a mut OpenFiles,
    /// The call's meter: charged for each open listing, counting opens.
    pub meter: &'a Arc<Meter>,
    /// The call's trace, told when the host-wide open-file cap refuses.
    pub trace: &'a TraceLog,
}

/// Serve `read-directory`, `read-directory-entry`, `open-at` and the
/// drops of descriptors and listings of `interface` (the
/// `wasi:filesystem/types` instance wasmtime-wasi linked) from this module:
/// call after wasmtime-wasi's `add_to_linker`.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    interface: &str,
    get: fn(&mut T) -> FilesView<'_>,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let shadowed = shadow(linker, interface, get);
    linker.allow_shadowing(false);
    shadowed
}

fn shadow<T: Send + 'static>(
    linker: &mut Linker<T>,
    interface: &str,
    get: fn(&mut T) -> FilesView<'_>,
) -> wasmtime::Result<()> {
    let mut types = linker.instance(interface)?;
    types.resource(
        "descriptor",
        ResourceType::host::<Descriptor>(),
        move |mut store, rep| {
            let view = get(store.data_mut());
            view.files
                .table
                .delete(Resource::<Descriptor>::new_own(rep))?;
            view.open.release(rep);
            Ok(())
        },
    )?;
    types.resource(
        "directory-entry-stream",
        ResourceType::host::<Listing>(),
        move |mut store, rep| {
            let view = get(store.data_mut());
            view.files.table.delete(Resource::<Listing>::new_own(rep))?;
            view.open.release(rep);
            Ok(())
        },
    )?;
    types.func_wrap(
        "[method]descriptor.read-directory",
        move |mut store: StoreContextMut<'_, T>, (dir,): (Resource<Descriptor>,)| {
            let FilesView {
                files,
                open,
                meter,
                trace,
            } = get(store.data_mut());
            let Descriptor::Dir(dir) = files.table.get(&dir)? else {
                return Ok((Err(ErrorCode::NotDirectory),));
            };
            let slot = match open.take(meter, trace) {
                Ok(slot) => slot,
                Err(code) => return Ok((Err(code),)),
            };
            Ok((match Listing::open(&dir.dir, meter) {
                Ok(listing) => {
                    meter.file_opened();
                    let listing = files.table.push(listing)?;
                    open.hold(listing.rep(), slot, meter);
                    Ok(listing)
                }
                Err(code) => Err(code),
            },))
        },
    )?;
    types.func_wrap(
        "[method]directory-entry-stream.read-directory-entry",
        move |mut store: StoreContextMut<'_, T>, (stream,): (Resource<Listing>,)| {
            let listing = get(store.data_mut()).files.table.get_mut(&stream)?;
            Ok((listing.next_entry(),))
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.write",
        move |mut store: StoreContextMut<'_, T>,
              (file, mut buffer, offset): (Resource<Descriptor>, Vec<u8>, u64)| {
            Box::new(async move {
                // A short write, as POSIX allows: the guest's libc writes
                // the rest, a bounded syscall at a time on the worker.
                buffer.truncate(MAX_WRITE_BYTES);
                let mut files = get(store.data_mut()).files;
                Ok((
                    match HostDescriptor::write(&mut files, file, buffer, offset).await {
                        Ok(written) => Ok(written),
                        Err(error) => Err(FsHost::convert_error_code(&mut files, error)?),
                    },
                ))
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.open-at",
        move |mut store: StoreContextMut<'_, T>,
              (dir, path_flags, path, open_flags, flags): (
            Resource<Descriptor>,
            PathFlags,
            String,
            OpenFlags,
            DescriptorFlags,
        )| {
            Box::new(async move {
                let FilesView {
                    mut files,
                    open,
                    meter,
                    trace,
                } = get(store.data_mut());
                let slot = match open.take(meter, trace) {
                    Ok(slot) => slot,
                    Err(code) => return Ok((Err(code),)),
                };
                let opened =
                    special_files::open_at(&mut files, dir, path_flags, path, open_flags, flags)
                        .await?;
                if let Ok(descriptor) = &opened {
                    meter.file_opened();
                    open.hold(descriptor.rep(), slot, meter);
                }
                Ok((opened,))
            })
        },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_calls_never_get_write_access() {
        assert_eq!(permissions(DirAccess::None, false), None);
        assert_eq!(permissions(DirAccess::None, true), None);
        assert_eq!(permissions(DirAccess::Read, false), Some(FsPerms::ReadOnly));
        assert_eq!(permissions(DirAccess::Write, true), Some(FsPerms::ReadOnly));
        assert_eq!(
            permissions(DirAccess::Write, false),
            Some(FsPerms::ReadWrite)
        );
    }
}
