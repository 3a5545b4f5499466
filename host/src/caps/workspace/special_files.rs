//! `open-at` never blocks on a FIFO, socket or device: it refuses them.
//!
//! Opening a FIFO blocks until its other end opens, and a device can block
//! or stream without end, inside a syscall that no deadline or epoch can
//! interrupt: on a runtime worker it would stall every call scheduled there.
//! A tool cannot make such files (WASI has no `mknod`), but a workspace may
//! hold them.
//!
//! - A read-only open of an existing path, the common case by far, is done
//!   here in one `openat2` confined as cap-std confines it (`RESOLVE_BENEATH`,
//!   no magic links) and with `O_NONBLOCK`, so even a FIFO opens at once;
//!   `fstat` on what was opened then decides. These are the two syscalls
//!   wasmtime-wasi makes for the same open, and nothing can be swapped in
//!   between. `O_NONBLOCK` has no effect on regular files and directories
//!   (open(2)), so it stays.
//! - Any other open (create, truncate, write) and any path `openat2` does
//!   not take are checked with a sandboxed `stat` of the same path with the
//!   same flags first, then opened by wasmtime-wasi, which also words every
//!   error. A concurrent rename can swap a special file in between that
//!   check and the open: what closes that is the workspace holding none
//!   (docs/SECURITY.md).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use wasmtime::component::Resource;
use wasmtime_wasi::OpenMode;
use wasmtime_wasi::filesystem::{Descriptor, Dir, File, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, DescriptorFlags, DescriptorType, ErrorCode, HostDescriptor, OpenFlags, PathFlags,
};

use super::BLOCK_CURRENT_THREAD;

/// Whether a file of this type (as wasmtime-wasi's `stat` reports it) may
/// be opened. Its `stat` reports FIFOs and sockets as `unknown`.
pub fn may_open(ty: DescriptorType) -> bool {
    matches!(
        ty,
        DescriptorType::RegularFile | DescriptorType::Directory | DescriptorType::SymbolicLink
    )
}

/// `open-at`, refusing special files with `unsupported`. A trap (a bad
/// handle) is the outer error, as in wasmtime-wasi.
pub async fn open_at(
    files: &mut WasiFilesystemCtxView<'_>,
    dir: Resource<Descriptor>,
    path_flags: PathFlags,
    path: String,
    open_flags: OpenFlags,
    flags: DescriptorFlags,
) -> wasmtime::Result<Result<Resource<Descriptor>, ErrorCode>> {
    // With `directory`, the OS refuses anything else without blocking.
    if !open_flags.contains(OpenFlags::DIRECTORY) {
        let read_only = flags == DescriptorFlags::READ || flags == DescriptorFlags::empty();
        if open_flags == OpenFlags::empty()
            && read_only
            && let Some(opened) = open_for_reading(files, &dir, path_flags, &path)?
        {
            return Ok(opened);
        }
        let probe = Resource::new_borrow(dir.rep());
        if let Ok(stat) = files.stat_at(probe, path_flags, path.clone()).await
            && !may_open(stat.type_)
        {
            return Ok(Err(ErrorCode::Unsupported));
        }
    }
    match files
        .open_at(dir, path_flags, path, open_flags, flags)
        .await
    {
        Ok(opened) => Ok(Ok(opened)),
        Err(error) => Ok(Err(types::Host::convert_error_code(files, error)?)),
    }
}

/// Whether this kernel refuses `openat2` (before Linux 5.6, or a seccomp
/// filter): then every open takes the checked path.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// A read-only open done here without blocking: the descriptor, a refusal
/// of a special file, or `None` for wasmtime-wasi to open (and word the
/// error) when `openat2` did not open it.
fn open_for_reading(
    files: &mut WasiFilesystemCtxView<'_>,
    dir: &Resource<Descriptor>,
    path_flags: PathFlags,
    path: &str,
) -> wasmtime::Result<Option<Result<Resource<Descriptor>, ErrorCode>>> {
    if NO_OPENAT2.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let Descriptor::Dir(parent) = files.table.get(dir)? else {
        return Ok(None);
    };
    let (handle, perms) = (Arc::clone(&parent.dir), parent.perms);
    let mut oflags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    if !path_flags.contains(PathFlags::SYMLINK_FOLLOW) {
        oflags |= OFlags::NOFOLLOW;
    }
    let opened = match rustix::fs::openat2(
        &*handle,
        path,
        oflags,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    ) {
        Ok(opened) => opened,
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {
            NO_OPENAT2.store(true, Ordering::Relaxed);
            return Ok(None);
        }
        Err(_) => return Ok(None),
    };
    let Ok(stat) = rustix::fs::fstat(&opened) else {
        return Ok(None);
    };
    let opened = std::fs::File::from(opened);
    let descriptor = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => Descriptor::File(File::new(
            opened,
            perms,
            OpenMode::READ,
            BLOCK_CURRENT_THREAD,
        )),
        FileType::Directory => Descriptor::Dir(Dir::new(
            opened,
            perms,
            OpenMode::READ,
            BLOCK_CURRENT_THREAD,
        )),
        _ => return Ok(Some(Err(ErrorCode::Unsupported))),
    };
    Ok(Some(Ok(files.table.push(descriptor)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_directories_and_links_may_be_opened() {
        for ty in [
            DescriptorType::RegularFile,
            DescriptorType::Directory,
            DescriptorType::SymbolicLink,
        ] {
            assert!(may_open(ty), "{ty:?}");
        }
        for ty in [
            DescriptorType::Unknown,
            DescriptorType::Fifo,
            DescriptorType::Socket,
            DescriptorType::CharacterDevice,
            DescriptorType::BlockDevice,
        ] {
            assert!(!may_open(ty), "{ty:?}");
        }
    }
}
