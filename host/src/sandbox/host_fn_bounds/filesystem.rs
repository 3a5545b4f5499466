//! What bounds each function of wasi:filesystem a tool can import.

/// Each function and how it is bounded.
pub(super) const BOUNDS: &[(&str, &str)] = &[
    // wasi:filesystem@0.2.12 (wasmtime-wasi, but for the functions
    // caps::workspace shadows). A path is at most fuel bytes; the kernel
    // refuses one over PATH_MAX in the one confined resolution.
    (
        "wasi:filesystem/preopens@0.2.12#get-directories",
        "sync: at most the two preopens, /workspace and /state",
    ),
    (
        "wasi:filesystem/types@0.2.12#filesystem-error-code",
        "sync, O(1): a downcast of an error the host made",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.advise",
        "async, inline: one fadvise",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.append-via-stream",
        "sync, O(1): a stream whose writes are ≤ 64 KiB each, on a blocking thread aborted with \
         the Store",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.create-directory-at",
        "async, inline: one confined mkdirat",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.get-flags",
        "async, inline: one fcntl",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.get-type",
        "async, inline: one fstat",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.is-same-object",
        "async, inline: two fstats",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.link-at",
        "async, inline: one confined linkat",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.metadata-hash",
        "async, inline: one fstat, hashed",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.metadata-hash-at",
        "async, inline: one confined stat, hashed",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.open-at",
        "async, inline, served by caps::workspace: a host-wide open-file slot first, then one \
         confined openat2 with O_NONBLOCK and an fstat, FIFOs and devices refused",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.read",
        "async, inline: one pread of at most 64 KiB (wasmtime-wasi's MAX_READ_SIZE_ALLOC clamps \
         the length)",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.read-directory",
        "sync, served by caps::workspace: an open-file slot and a LISTING_BYTES (32 KiB) charge \
         first, then one openat",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.read-via-stream",
        "sync, O(1): a stream whose reads are ≤ 64 KiB each, on a blocking thread aborted with \
         the Store",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.readlink-at",
        "async, inline: one confined readlinkat, at most PATH_MAX back",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.remove-directory-at",
        "async, inline: one confined unlinkat of an empty directory",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.rename-at",
        "async, inline: one confined renameat",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.set-size",
        "async, inline: one ftruncate; GAP: cutting a large file frees its blocks in the syscall, \
         on the worker, for as long as the disk takes",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.set-times",
        "async, inline: one futimens",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.set-times-at",
        "async, inline: one confined utimensat",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.stat",
        "async, inline: one fstat",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.stat-at",
        "async, inline: one confined stat",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.symlink-at",
        "async, inline: one confined symlinkat, the target at most PATH_MAX",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.sync",
        "async, inline: one fsync; GAP: it runs on the worker for as long as the disk takes, and \
         the deadline cannot cut it",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.sync-data",
        "async, inline: one fdatasync; GAP: it runs on the worker for as long as the disk takes, \
         and the deadline cannot cut it",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.unlink-file-at",
        "async, inline: one confined unlinkat; GAP: the last link of a large file frees its \
         blocks in the syscall, on the worker",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.write",
        "async, inline, shadowed (caps/workspace): one pwrite of at most MAX_WRITE_BYTES \
         (64 KiB, a short write; the guest writes the rest), as read is clamped",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]descriptor.write-via-stream",
        "sync, O(1): a stream whose writes are ≤ 64 KiB each, on a blocking thread aborted with \
         the Store",
    ),
    (
        "wasi:filesystem/types@0.2.12#[method]directory-entry-stream.read-directory-entry",
        "sync, served by caps::workspace: the next entry, reading at most one getdents batch \
         into the listing's buffer",
    ),
    (
        "wasi:filesystem/types@0.2.12#[resource-drop]descriptor",
        "sync, O(1), served by caps::workspace: a table delete, and the open-file slot given back",
    ),
    (
        "wasi:filesystem/types@0.2.12#[resource-drop]directory-entry-stream",
        "sync, O(1), served by caps::workspace: a table delete, and the open-file slot given back",
    ),
];
