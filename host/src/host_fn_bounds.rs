//! Every function a tool can import, and what bounds each in bytes and
//! time.
//!
//! An epoch interrupts wasm, never a host function: each function the
//! contract's world imports must do work linear in its input, check its
//! caps before that work, and end in bounded time. [`BOUNDS`] says how each
//! one does, and the test below fails when the world imports a function it
//! has no entry for, so a new host function cannot land unbounded.
//!
//! The entries use these words:
//! - **fuel**: wasmtime's hostcall fuel (`instance.rs`, `usage.rs`
//!   `hostcall_bytes`, 32 MiB by default). A call whose strings and lists
//!   are larger traps before the host function runs.
//! - **sync**: a synchronous host function; nothing preempts it.
//! - **dropped at the deadline**: an async host function's awaits end when
//!   `Instance::within` drops the call, 250 ms past its deadline.
//! - **gated**: disk work on a blocking thread through
//!   [`crate::blocking::run`]: at most 16 at once host-wide, told when its
//!   call has gone.
//! - **inline**: a wasmtime-wasi filesystem syscall run on the worker that
//!   runs the guest (`allow_blocking_current_thread`), not preempted.
//! - **GAP**: the bound is missing; the entry says what is unbounded.

use std::collections::BTreeSet;
use std::path::Path;

use wasmtime::Engine;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker};
use wit_parser::{LiftLowerAbi, ManglingAndAbi, Resolve, WorldId};

use crate::engine::{EngineOptions, ToolEngine};
use crate::state::CallState;

/// A `tcp-socket` method: no tool can reach one.
const NO_TCP_SOCKET: &str = "O(1) and unreachable: create-tcp-socket is refused, so a tool holds no \
                             tcp-socket handle";

/// A `udp` method: no tool can reach one.
const NO_UDP_SOCKET: &str = "O(1) and unreachable: create-udp-socket is refused, so a tool holds no \
                             udp-socket or datagram-stream handle";

/// The server side of `wasi:http/types`: no tool can reach it.
const NO_INCOMING_REQUEST: &str = "O(1) and unreachable: a tool exports no incoming handler, so it \
                                   holds no incoming-request or response-outparam handle";

/// Every function the world imports, keyed `<interface>#<function>` as the
/// component type names it (a destructor as `#[resource-drop]<resource>`,
/// under the interface that defines the resource), with what bounds it.
const BOUNDS: &[(&str, &str)] = &[
    // toolhost:tool@0.2.1
    (
        "toolhost:tool/log@0.2.1#log",
        "sync, O(n) in the message (n ≤ fuel): cut to MAX_LOG_LINE_BYTES (4 KiB) into a new \
         string; at most MAX_LOG_LINES (1000) kept a call",
    ),
    (
        "toolhost:tool/progress@0.2.1#report",
        "sync, O(n) in the message (n ≤ fuel): cut to MAX_PROGRESS_MESSAGE_BYTES (1 KiB); at \
         most MAX_PROGRESS_REPORTS (256) a call reach the watcher",
    ),
    (
        "toolhost:tool/resource-updates@0.2.1#updated",
        "sync: an address over MAX_URI_BYTES (2 KiB) is refused before matching, which is linear \
         (regex) against the component's ≤ MAX_RESOURCES addresses and ≤ MAX_RESOURCE_TEMPLATES \
         templates; at most MAX_RESOURCE_UPDATES (64) announced a call",
    ),
    (
        "toolhost:tool/ask@0.2.1#elicit",
        "async: at most MAX_QUESTIONS_PER_CALL (16) a call; the message ≤ 4096 characters and the \
         form ≤ MAX_FORM_BYTES (64 KiB) before it is parsed; the wait, with the deadline paused, \
         shares one ask_timeout with the call's other questions",
    ),
    (
        "toolhost:tool/ask@0.2.1#sample",
        "async: at most 16 questions a call; 1 to MAX_SAMPLING_MESSAGES (64) messages and ≤ \
         MAX_SAMPLING_LIST (16) stop sequences and hints, all their bytes ≤ max_output_bytes, \
         before asking; the wait shares one ask_timeout with the call's other questions",
    ),
    (
        "toolhost:tool/context@0.2.1#state-root",
        "sync, O(1): a constant path, or none",
    ),
    (
        "toolhost:tool/context@0.2.1#workspace-dir",
        "sync, O(1): a constant path, or none",
    ),
    (
        "toolhost:tool/artifacts@0.2.1#save",
        "async: the bytes are charged to host_memory_mb first; name, media type and ≤ MAX_TAGS \
         tags are checked before any disk work; the write and its fsyncs are gated, within \
         session_artifacts_mb and MAX_ARTIFACTS; dropped at the deadline",
    ),
    (
        "toolhost:tool/artifacts@0.2.1#save-file",
        "async: the path is opened beneath a mount (the kernel refuses one over PATH_MAX); a gated \
         copy of at most the session's room left (session_artifacts_mb) that stops at its next \
         read once the call has gone",
    ),
    (
        "toolhost:tool/artifacts@0.2.1#list-artifacts",
        "async: a gated read of at most MAX_ARTIFACTS + 1 records; dropped at the deadline",
    ),
    (
        "toolhost:tool/metrics@0.2.1#counter-add",
        "sync, O(n) in the name and labels (n ≤ fuel): MAX_UPDATES_PER_CALL (10 000) a call; the \
         name ≤ 64 bytes before it is scanned, ≤ MAX_LABELS (4) before they are sorted; at most \
         MAX_METRICS × MAX_SERIES kept",
    ),
    (
        "toolhost:tool/metrics@0.2.1#histogram-record",
        "sync, O(n) in the name and labels (n ≤ fuel): MAX_UPDATES_PER_CALL (10 000) a call; the \
         name ≤ 64 bytes before it is scanned, ≤ MAX_LABELS (4) before they are sorted; at most \
         MAX_METRICS × MAX_SERIES kept",
    ),
    (
        "toolhost:tool/sessions@0.2.1#get-session",
        "async: channel and id ≤ MAX_NAME_BYTES (256) before the lookup, a map read or one Redis \
         round trip under its response timeout; dropped at the deadline",
    ),
    (
        "toolhost:tool/sessions@0.2.1#send",
        "async: MAX_SENDS_PER_CALL (16) a call; channel, key and id ≤ 256 bytes, the message ≤ \
         MAX_MESSAGE_BYTES (64 KiB, charged) and auth ≤ MAX_AUTH_BYTES (4 KiB) before the lookup; \
         a start's record is written gated; dropped at the deadline",
    ),
    (
        "toolhost:tool/reminders@0.2.1#schedule",
        "async: `at` ≤ 64 bytes, a message or input ≤ MAX_PAYLOAD_BYTES (64 KiB) before it is \
         parsed, a call's tool only if granted, its input checked with linear regexes; ≤ 64 \
         pending a session and 10 000 a host; the write is gated; dropped at the deadline",
    ),
    (
        "toolhost:tool/reminders@0.2.1#list-reminders",
        "async: a scan of ≤ MAX_PENDING (10 000) pending under a lock no disk work holds, ≤ \
         MAX_PENDING_PER_SESSION (64) returned; or one Redis round trip, dropped at the deadline",
    ),
    (
        "toolhost:tool/reminders@0.2.1#cancel-reminder",
        "async: an id over 64 bytes finds nothing at once; otherwise a map key, or a Redis key \
         in a fleet; the removal is gated, or one Redis round trip; dropped at the deadline",
    ),
    // toolhost:tool@0.1.0: contract 0.1.0's log and progress, served by the
    // same code as the current ones.
    (
        "toolhost:tool/log@0.1.0#log",
        "sync, O(n) in the message (n ≤ fuel): the current log's code, cut to 4 KiB, at most 1000 \
         lines a call",
    ),
    (
        "toolhost:tool/progress@0.1.0#report",
        "sync, O(n) in the message (n ≤ fuel): the current progress's code, cut to 1 KiB, at most \
         256 reports a call",
    ),
    // wasi:keyvalue@0.2.0-draft2 (caps::kv): every operation counts against
    // MAX_OPS_PER_CALL; redb work is gated, Redis has response timeouts.
    (
        "wasi:keyvalue/store@0.2.0-draft2#open",
        "async without a wait: the name is looked up in the grant's buckets, O(grant); a handle \
         within max_handles",
    ),
    (
        "wasi:keyvalue/store@0.2.0-draft2#[method]bucket.get",
        "async: the key ≤ MAX_KEY_BYTES (1 KiB) first, one of MAX_OPS_PER_CALL (10 000); one \
         point read, gated or on Redis; dropped at the deadline",
    ),
    (
        "wasi:keyvalue/store@0.2.0-draft2#[method]bucket.set",
        "async: the key ≤ 1 KiB and the value ≤ MAX_VALUE_BYTES (1 MiB) first, one op of 10 000; \
         one write, gated or on Redis; dropped at the deadline",
    ),
    (
        "wasi:keyvalue/store@0.2.0-draft2#[method]bucket.delete",
        "async: the key ≤ 1 KiB first, one op of 10 000; one write, gated or on Redis; dropped at \
         the deadline",
    ),
    (
        "wasi:keyvalue/store@0.2.0-draft2#[method]bucket.exists",
        "async: the key ≤ 1 KiB first, one op of 10 000; one point read, gated or on Redis; \
         dropped at the deadline",
    ),
    (
        "wasi:keyvalue/store@0.2.0-draft2#[method]bucket.list-keys",
        "async: the cursor ≤ 1 KiB first, one op of 10 000; a page of ≤ LIST_PAGE (1000) keys, \
         gated or on Redis; dropped at the deadline",
    ),
    (
        "wasi:keyvalue/store@0.2.0-draft2#[resource-drop]bucket",
        "O(1): a table delete",
    ),
    (
        "wasi:keyvalue/atomics@0.2.0-draft2#[static]cas.new",
        "async: the key ≤ 1 KiB first, one op of 10 000; one read, its value charged to \
         host_memory_mb while the handle lives; dropped at the deadline",
    ),
    (
        "wasi:keyvalue/atomics@0.2.0-draft2#[method]cas.current",
        "async without a wait: a copy of the charged value (≤ 1 MiB)",
    ),
    (
        "wasi:keyvalue/atomics@0.2.0-draft2#[resource-drop]cas",
        "O(1): a table delete, which gives the charge back",
    ),
    (
        "wasi:keyvalue/atomics@0.2.0-draft2#increment",
        "async: the key ≤ 1 KiB first, one op of 10 000; one write, gated or on Redis; dropped at \
         the deadline",
    ),
    (
        "wasi:keyvalue/atomics@0.2.0-draft2#swap",
        "async: the value ≤ 1 MiB first, one op of 10 000; one compare-and-swap, and after a \
         conflict one read charged to host_memory_mb; dropped at the deadline",
    ),
    (
        "wasi:keyvalue/batch@0.2.0-draft2#get-many",
        "async: each key ≤ 1 KiB (O(n), n ≤ fuel), one op a key; keys charged first, values read \
         only while they fit host_memory_mb; gated or on Redis; dropped at the deadline",
    ),
    (
        "wasi:keyvalue/batch@0.2.0-draft2#set-many",
        "async: each key ≤ 1 KiB and value ≤ 1 MiB (O(n), n ≤ fuel), one op a pair; one \
         transaction, gated or on Redis; dropped at the deadline",
    ),
    (
        "wasi:keyvalue/batch@0.2.0-draft2#delete-many",
        "async: each key ≤ 1 KiB (O(n), n ≤ fuel), one op a key; one transaction, gated or on \
         Redis; dropped at the deadline",
    ),
    // wasi:io@0.2.12 (wasmtime-wasi-io, over the streams of caps::stdio,
    // wasmtime-wasi's files and wasmtime-wasi-http's bodies).
    (
        "wasi:io/error@0.2.12#[method]error.to-debug-string",
        "sync, O(1): formats an error the host made",
    ),
    (
        "wasi:io/error@0.2.12#[resource-drop]error",
        "O(1): a table delete",
    ),
    (
        "wasi:io/poll@0.2.12#poll",
        "async: O(n log n) in the list (n ≤ fuel / 4) to group it, each distinct pollable polled \
         at each wake-up; dropped at the deadline",
    ),
    (
        "wasi:io/poll@0.2.12#[method]pollable.block",
        "async: waits for one pollable; dropped at the deadline",
    ),
    (
        "wasi:io/poll@0.2.12#[method]pollable.ready",
        "async without a wait: polls one pollable once",
    ),
    (
        "wasi:io/poll@0.2.12#[resource-drop]pollable",
        "O(1): a table delete",
    ),
    (
        "wasi:io/streams@0.2.12#[method]input-stream.read",
        "sync: the stream clamps the length (a file to one 64 KiB read on a blocking thread, an \
         HTTP body to one received frame, stdin is empty); O(bytes returned)",
    ),
    (
        "wasi:io/streams@0.2.12#[method]input-stream.blocking-read",
        "async: as read, once data is there; dropped at the deadline (an HTTP body also by its \
         between-bytes and request timeouts)",
    ),
    (
        "wasi:io/streams@0.2.12#[method]input-stream.skip",
        "sync: as read, the bytes thrown away",
    ),
    (
        "wasi:io/streams@0.2.12#[method]input-stream.blocking-skip",
        "async: as blocking-read, the bytes thrown away; dropped at the deadline",
    ),
    (
        "wasi:io/streams@0.2.12#[method]input-stream.subscribe",
        "sync, O(1): a pollable handle within max_handles",
    ),
    (
        "wasi:io/streams@0.2.12#[method]output-stream.check-write",
        "sync, O(1): the stream's permit (stdout and stderr 1 MiB, a file 64 KiB, an HTTP body \
         its chunk size)",
    ),
    (
        "wasi:io/streams@0.2.12#[method]output-stream.write",
        "sync, O(n) in the bytes (n ≤ fuel; a file or HTTP body refuses more than its permit); \
         stdout and stderr keep at most their capture's cap",
    ),
    (
        "wasi:io/streams@0.2.12#[method]output-stream.write-zeroes",
        "sync: the length ≤ the stream's permit (≤ 1 MiB) is checked before the zeroes are made",
    ),
    (
        "wasi:io/streams@0.2.12#[method]output-stream.flush",
        "sync, O(1): starts a flush",
    ),
    (
        "wasi:io/streams@0.2.12#[method]output-stream.blocking-write-and-flush",
        "async: ≤ 4096 bytes (wasmtime-wasi-io traps past it) before the write; dropped at the \
         deadline",
    ),
    (
        "wasi:io/streams@0.2.12#[method]output-stream.blocking-write-zeroes-and-flush",
        "async: ≤ 4096 zeroes, checked before they are made; dropped at the deadline",
    ),
    (
        "wasi:io/streams@0.2.12#[method]output-stream.blocking-flush",
        "async: waits for the stream to drain; dropped at the deadline",
    ),
    (
        "wasi:io/streams@0.2.12#[method]output-stream.splice",
        "sync: moves at most the output's permit, as the input clamps a read; O(bytes moved)",
    ),
    (
        "wasi:io/streams@0.2.12#[method]output-stream.blocking-splice",
        "async: as splice once both streams are ready; dropped at the deadline",
    ),
    (
        "wasi:io/streams@0.2.12#[method]output-stream.subscribe",
        "sync, O(1): a pollable handle within max_handles",
    ),
    (
        "wasi:io/streams@0.2.12#[resource-drop]input-stream",
        "async: waits for the stream's one read in flight (≤ 64 KiB) or aborts its task; dropped \
         at the deadline",
    ),
    (
        "wasi:io/streams@0.2.12#[resource-drop]output-stream",
        "async: waits for the stream's one write in flight (≤ 64 KiB) or aborts its task; dropped \
         at the deadline",
    ),
    // wasi:clocks@0.2.12
    ("wasi:clocks/monotonic-clock@0.2.12#now", "sync, O(1)"),
    (
        "wasi:clocks/monotonic-clock@0.2.12#resolution",
        "sync, O(1)",
    ),
    (
        "wasi:clocks/monotonic-clock@0.2.12#subscribe-duration",
        "sync, O(1): a timer pollable within max_handles; waiting on it is poll's, dropped at \
         the deadline",
    ),
    (
        "wasi:clocks/monotonic-clock@0.2.12#subscribe-instant",
        "sync, O(1): a timer pollable within max_handles; waiting on it is poll's, dropped at \
         the deadline",
    ),
    ("wasi:clocks/wall-clock@0.2.12#now", "sync, O(1)"),
    ("wasi:clocks/wall-clock@0.2.12#resolution", "sync, O(1)"),
    // wasi:random@0.2.12
    (
        "wasi:random/random@0.2.12#get-random-bytes",
        "sync: the length ≤ MAX_RANDOM_BYTES (1 MiB) is checked first (past it the call traps), \
         then O(length)",
    ),
    ("wasi:random/random@0.2.12#get-random-u64", "sync, O(1)"),
    (
        "wasi:random/insecure@0.2.12#get-insecure-random-bytes",
        "sync: the length ≤ MAX_RANDOM_BYTES (1 MiB) is checked first (past it the call traps), \
         then O(length)",
    ),
    (
        "wasi:random/insecure@0.2.12#get-insecure-random-u64",
        "sync, O(1)",
    ),
    (
        "wasi:random/insecure-seed@0.2.12#insecure-seed",
        "sync, O(1)",
    ),
    // wasi:cli@0.2.12
    (
        "wasi:cli/environment@0.2.12#get-environment",
        "sync, O(variables): the ones the operator granted",
    ),
    (
        "wasi:cli/environment@0.2.12#get-arguments",
        "sync, O(1): no arguments",
    ),
    (
        "wasi:cli/environment@0.2.12#initial-cwd",
        "sync, O(1): none",
    ),
    (
        "wasi:cli/exit@0.2.12#exit",
        "sync, O(1): ends the instance with a trap",
    ),
    (
        "wasi:cli/exit@0.2.12#exit-with-code",
        "sync, O(1): ends the instance with a trap",
    ),
    (
        "wasi:cli/stdin@0.2.12#get-stdin",
        "sync, O(1): a handle on an empty stream",
    ),
    (
        "wasi:cli/stdout@0.2.12#get-stdout",
        "sync, O(1): a handle on the call's capture, which keeps at most its cap",
    ),
    (
        "wasi:cli/stderr@0.2.12#get-stderr",
        "sync, O(1): a handle on the call's capture, which keeps at most its cap",
    ),
    (
        "wasi:cli/terminal-stdin@0.2.12#get-terminal-stdin",
        "sync, O(1): none, stdin is no terminal",
    ),
    (
        "wasi:cli/terminal-stdout@0.2.12#get-terminal-stdout",
        "sync, O(1): none, the capture is no terminal",
    ),
    (
        "wasi:cli/terminal-stderr@0.2.12#get-terminal-stderr",
        "sync, O(1): none, the capture is no terminal",
    ),
    (
        "wasi:cli/terminal-input@0.2.12#[resource-drop]terminal-input",
        "O(1): a table delete (a tool never gets one)",
    ),
    (
        "wasi:cli/terminal-output@0.2.12#[resource-drop]terminal-output",
        "O(1): a table delete (a tool never gets one)",
    ),
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
    // wasi:sockets@0.2.12: always denied (caps::workspace), before any
    // socket is made or any name parsed.
    (
        "wasi:sockets/instance-network@0.2.12#instance-network",
        "sync, O(1): a network handle within max_handles",
    ),
    (
        "wasi:sockets/network@0.2.12#[resource-drop]network",
        "O(1): a table delete",
    ),
    (
        "wasi:sockets/ip-name-lookup@0.2.12#resolve-addresses",
        "sync, O(1): refused (no ip-name-lookup) before the name is parsed",
    ),
    (
        "wasi:sockets/ip-name-lookup@0.2.12#[method]resolve-address-stream.resolve-next-address",
        "O(1) and unreachable: resolve-addresses is refused, so a tool holds no stream",
    ),
    (
        "wasi:sockets/ip-name-lookup@0.2.12#[method]resolve-address-stream.subscribe",
        "O(1) and unreachable: resolve-addresses is refused, so a tool holds no stream",
    ),
    (
        "wasi:sockets/ip-name-lookup@0.2.12#[resource-drop]resolve-address-stream",
        "O(1) and unreachable: resolve-addresses is refused, so a tool holds no stream",
    ),
    (
        "wasi:sockets/tcp-create-socket@0.2.12#create-tcp-socket",
        "sync, O(1): refused (no TCP) before a socket is made",
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.accept",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.address-family",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.finish-bind",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.finish-connect",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.finish-listen",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.hop-limit",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.is-listening",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.keep-alive-count",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.keep-alive-enabled",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.keep-alive-idle-time",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.keep-alive-interval",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.local-address",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.receive-buffer-size",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.remote-address",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.send-buffer-size",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.set-hop-limit",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.set-keep-alive-count",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.set-keep-alive-enabled",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.set-keep-alive-idle-time",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.set-keep-alive-interval",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.set-listen-backlog-size",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.set-receive-buffer-size",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.set-send-buffer-size",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.shutdown",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.start-bind",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.start-connect",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.start-listen",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[method]tcp-socket.subscribe",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/tcp@0.2.12#[resource-drop]tcp-socket",
        NO_TCP_SOCKET,
    ),
    (
        "wasi:sockets/udp-create-socket@0.2.12#create-udp-socket",
        "async without a wait, O(1): refused (no UDP) before a socket is made",
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]incoming-datagram-stream.receive",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]incoming-datagram-stream.subscribe",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]outgoing-datagram-stream.check-send",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]outgoing-datagram-stream.send",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]outgoing-datagram-stream.subscribe",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.address-family",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.finish-bind",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.local-address",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.receive-buffer-size",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.remote-address",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.send-buffer-size",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.set-receive-buffer-size",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.set-send-buffer-size",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.set-unicast-hop-limit",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.start-bind",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.stream",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.subscribe",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[method]udp-socket.unicast-hop-limit",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[resource-drop]incoming-datagram-stream",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[resource-drop]outgoing-datagram-stream",
        NO_UDP_SOCKET,
    ),
    (
        "wasi:sockets/udp@0.2.12#[resource-drop]udp-socket",
        NO_UDP_SOCKET,
    ),
    // wasi:http@0.2.12 (wasmtime-wasi-http, with caps::http's hooks and
    // request_parts). A header map is held to per_handle_bytes
    // (host_memory_mb / max_handles, 32 KiB by default).
    (
        "wasi:http/outgoing-handler@0.2.12#handle",
        "sync: the request's parts are bounded already, admission is O(allow-list) within \
         max_requests_per_call; the exchange is a task aborted with the Store, under the DNS, \
         connect, first-byte, between-bytes and request timeouts and the response body cap",
    ),
    (
        "wasi:http/types@0.2.12#http-error-code",
        "sync, O(1): a downcast of an error the host made",
    ),
    (
        "wasi:http/types@0.2.12#[constructor]fields",
        "sync, O(1): an empty map, a handle within max_handles",
    ),
    (
        "wasi:http/types@0.2.12#[static]fields.from-list",
        "sync, O(n) in the entries (n ≤ fuel): each name and value checked, the map held to \
         per_handle_bytes",
    ),
    (
        "wasi:http/types@0.2.12#[method]fields.append",
        "sync, O(n) in the value (n ≤ fuel): checked, then the map held to per_handle_bytes",
    ),
    (
        "wasi:http/types@0.2.12#[method]fields.set",
        "sync, O(n) in the values (n ≤ fuel): checked, then the map held to per_handle_bytes",
    ),
    (
        "wasi:http/types@0.2.12#[method]fields.get",
        "sync, O(map), the map ≤ per_handle_bytes",
    ),
    (
        "wasi:http/types@0.2.12#[method]fields.has",
        "sync, O(map), the map ≤ per_handle_bytes",
    ),
    (
        "wasi:http/types@0.2.12#[method]fields.delete",
        "sync, O(map), the map ≤ per_handle_bytes",
    ),
    (
        "wasi:http/types@0.2.12#[method]fields.entries",
        "sync, O(map): a copy of a map ≤ per_handle_bytes",
    ),
    (
        "wasi:http/types@0.2.12#[method]fields.clone",
        "sync, O(map): a copy of a map ≤ per_handle_bytes, a handle within max_handles",
    ),
    (
        "wasi:http/types@0.2.12#[resource-drop]fields",
        "O(1): a table delete",
    ),
    (
        "wasi:http/types@0.2.12#[constructor]outgoing-request",
        "sync, O(1): takes a headers handle",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-request.body",
        "sync, O(1): a body handle, written in chunks of at most the body chunk size",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-request.headers",
        "sync, O(map): a copy of the request's headers (≤ per_handle_bytes)",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-request.method",
        "sync: a copy of a method kept ≤ MAX_METHOD_BYTES (64)",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-request.set-method",
        "sync, served by caps::http::request_parts: a method over MAX_METHOD_BYTES (64) is \
         refused before it is kept",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-request.authority",
        "sync: a copy of an authority kept ≤ MAX_AUTHORITY_BYTES (1024)",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-request.set-authority",
        "sync, served by caps::http::request_parts: an authority over MAX_AUTHORITY_BYTES (1024) \
         is refused before it is parsed",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-request.path-with-query",
        "sync: a copy of a path kept ≤ 64 KiB",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-request.set-path-with-query",
        "sync: the http crate refuses a path over 64 KiB (MAX_LEN) before its O(n) scan",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-request.scheme",
        "sync: a copy of a scheme kept ≤ 64 bytes",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-request.set-scheme",
        "sync: the http crate refuses a scheme over 64 bytes before its scan",
    ),
    (
        "wasi:http/types@0.2.12#[resource-drop]outgoing-request",
        "O(1): a table delete",
    ),
    (
        "wasi:http/types@0.2.12#[constructor]request-options",
        "sync, O(1)",
    ),
    (
        "wasi:http/types@0.2.12#[method]request-options.connect-timeout",
        "sync, O(1)",
    ),
    (
        "wasi:http/types@0.2.12#[method]request-options.set-connect-timeout",
        "sync, O(1): a tool's timeout can only shorten the host's",
    ),
    (
        "wasi:http/types@0.2.12#[method]request-options.first-byte-timeout",
        "sync, O(1)",
    ),
    (
        "wasi:http/types@0.2.12#[method]request-options.set-first-byte-timeout",
        "sync, O(1): a tool's timeout can only shorten the host's",
    ),
    (
        "wasi:http/types@0.2.12#[method]request-options.between-bytes-timeout",
        "sync, O(1)",
    ),
    (
        "wasi:http/types@0.2.12#[method]request-options.set-between-bytes-timeout",
        "sync, O(1): a tool's timeout can only shorten the host's",
    ),
    (
        "wasi:http/types@0.2.12#[resource-drop]request-options",
        "O(1): a table delete",
    ),
    (
        "wasi:http/types@0.2.12#[method]future-incoming-response.subscribe",
        "sync, O(1): a pollable handle; waiting on it is poll's, dropped at the deadline",
    ),
    (
        "wasi:http/types@0.2.12#[method]future-incoming-response.get",
        "sync, O(1): takes the response if the exchange has ended",
    ),
    (
        "wasi:http/types@0.2.12#[resource-drop]future-incoming-response",
        "O(1): a table delete, which aborts the exchange's task",
    ),
    (
        "wasi:http/types@0.2.12#[method]incoming-response.status",
        "sync, O(1)",
    ),
    (
        "wasi:http/types@0.2.12#[method]incoming-response.headers",
        "sync: a handle on headers hyper read within its header limits",
    ),
    (
        "wasi:http/types@0.2.12#[method]incoming-response.consume",
        "sync, O(1): the body handle, read under the response body cap",
    ),
    (
        "wasi:http/types@0.2.12#[resource-drop]incoming-response",
        "O(1): a table delete",
    ),
    (
        "wasi:http/types@0.2.12#[method]incoming-body.stream",
        "sync, O(1): a stream handle, read under the response body cap and timeouts",
    ),
    (
        "wasi:http/types@0.2.12#[static]incoming-body.finish",
        "sync, O(1): a future-trailers handle",
    ),
    (
        "wasi:http/types@0.2.12#[resource-drop]incoming-body",
        "O(1): a table delete",
    ),
    (
        "wasi:http/types@0.2.12#[method]future-trailers.subscribe",
        "sync, O(1): a pollable handle; waiting on it is poll's, dropped at the deadline",
    ),
    (
        "wasi:http/types@0.2.12#[method]future-trailers.get",
        "sync: takes trailers hyper read within its header limits, if they came",
    ),
    (
        "wasi:http/types@0.2.12#[resource-drop]future-trailers",
        "O(1): a table delete",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-body.write",
        "sync, O(1): a stream handle, written in chunks of at most the body chunk size",
    ),
    (
        "wasi:http/types@0.2.12#[static]outgoing-body.finish",
        "sync, O(map): takes trailers (≤ per_handle_bytes) and checks the content length",
    ),
    (
        "wasi:http/types@0.2.12#[resource-drop]outgoing-body",
        "O(1): a table delete",
    ),
    (
        "wasi:http/types@0.2.12#[constructor]outgoing-response",
        "sync, O(1): takes a headers handle (of no use without a response-outparam)",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-response.status-code",
        "sync, O(1)",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-response.set-status-code",
        "sync, O(1)",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-response.headers",
        "sync, O(map): a copy of the headers (≤ per_handle_bytes)",
    ),
    (
        "wasi:http/types@0.2.12#[method]outgoing-response.body",
        "sync, O(1): a body handle, written in chunks of at most the body chunk size",
    ),
    (
        "wasi:http/types@0.2.12#[resource-drop]outgoing-response",
        "O(1): a table delete",
    ),
    (
        "wasi:http/types@0.2.12#[method]incoming-request.method",
        NO_INCOMING_REQUEST,
    ),
    (
        "wasi:http/types@0.2.12#[method]incoming-request.path-with-query",
        NO_INCOMING_REQUEST,
    ),
    (
        "wasi:http/types@0.2.12#[method]incoming-request.scheme",
        NO_INCOMING_REQUEST,
    ),
    (
        "wasi:http/types@0.2.12#[method]incoming-request.authority",
        NO_INCOMING_REQUEST,
    ),
    (
        "wasi:http/types@0.2.12#[method]incoming-request.headers",
        NO_INCOMING_REQUEST,
    ),
    (
        "wasi:http/types@0.2.12#[method]incoming-request.consume",
        NO_INCOMING_REQUEST,
    ),
    (
        "wasi:http/types@0.2.12#[resource-drop]incoming-request",
        NO_INCOMING_REQUEST,
    ),
    (
        "wasi:http/types@0.2.12#[static]response-outparam.set",
        NO_INCOMING_REQUEST,
    ),
    (
        "wasi:http/types@0.2.12#[resource-drop]response-outparam",
        NO_INCOMING_REQUEST,
    ),
];

/// A component made from `world` of `resolve` that imports every function
/// of it: wit-component's stand-in core module, which lowers them all
/// (a real guest's component imports only what it calls).
fn probe(resolve: &Resolve, world: WorldId) -> Vec<u8> {
    let mut module =
        wit_component::dummy_module(resolve, world, ManglingAndAbi::Legacy(LiftLowerAbi::Sync));
    wit_component::embed_component_metadata(
        &mut module,
        resolve,
        world,
        wit_component::StringEncoding::UTF8,
        false,
    )
    .expect("the world's metadata embeds");
    wit_component::ComponentEncoder::default()
        .module(&module)
        .expect("the stand-in module is one wit-component takes")
        .validate(true)
        .encode()
        .expect("the probe component encodes")
}

/// The world `name` of the WIT at `path` (a directory with `deps/`, or a
/// file) and what it was resolved in.
fn world(path: &Path, name: &str) -> (Resolve, WorldId) {
    let mut resolve = Resolve::default();
    let package = match path.is_dir() {
        true => resolve.push_dir(path).map(|(package, _)| package),
        false => resolve.push_file(path),
    }
    .unwrap_or_else(|e| panic!("cannot read {}: {e:#}", path.display()));
    let world = resolve
        .select_world(&[package], Some(name))
        .unwrap_or_else(|e| panic!("{} has no world {name}: {e:#}", path.display()));
    (resolve, world)
}

/// Every function `component` imports, named `<interface>#<function>`,
/// and `<interface>#[resource-drop]<resource>` for each resource's
/// destructor, under the interface that defines it: an interface that
/// `use`s a resource names the same type again, later in the imports.
fn imported_functions(engine: &Engine, component: &Component) -> BTreeSet<String> {
    let ty = component.component_type();
    let mut functions = BTreeSet::new();
    let mut resources = Vec::new();
    for (name, import) in ty.imports(engine) {
        match import.ty {
            ComponentItem::ComponentFunc(_) => {
                functions.insert(name.to_string());
            }
            ComponentItem::ComponentInstance(instance) => {
                for (item, export) in instance.exports(engine) {
                    match export.ty {
                        ComponentItem::ComponentFunc(_) => {
                            functions.insert(format!("{name}#{item}"));
                        }
                        ComponentItem::Resource(resource) if !resources.contains(&resource) => {
                            resources.push(resource);
                            functions.insert(format!("{name}#[resource-drop]{item}"));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    functions
}

/// What the test says when the functions imported and [`BOUNDS`] differ.
fn mismatch(missing: &[&str], extra: &[&str]) -> String {
    let mut message = String::new();
    if !missing.is_empty() {
        message.push_str(
            "the world imports these functions, and BOUNDS has no entry for them: add an entry \
             to BOUNDS in host/src/host_fn_bounds.rs saying how this function is bounded in \
             bytes and time (its caps, checked before its work, and what ends it):\n",
        );
        for name in missing {
            message.push_str(&format!("  {name}\n"));
        }
    }
    if !extra.is_empty() {
        message.push_str(
            "BOUNDS has entries for these functions, which the world no longer imports: remove \
             them from host/src/host_fn_bounds.rs, or fix their names:\n",
        );
        for name in extra {
            message.push_str(&format!("  {name}\n"));
        }
    }
    message
}

#[test]
fn every_imported_function_has_its_bounds() {
    let cache = tempfile::tempdir().unwrap();
    let tool_engine = ToolEngine::new(&EngineOptions {
        max_memory_bytes: 16 << 20,
        max_instances: 1,
        cache_dir: cache.path().to_path_buf(),
        cache_max_bytes: 1 << 20,
        shared_cache: None,
    })
    .unwrap();
    let engine = tool_engine.engine();
    let mut linker = Linker::<CallState>::new(engine);
    crate::state::add_to_linker(&mut linker).unwrap();
    let host = Path::new(env!("CARGO_MANIFEST_DIR"));
    let worlds = [
        // The current contract with every standard interface; `@unstable`
        // items are left out, as in a guest built against it.
        world(&host.join("../wit"), "plugin"),
        // Contract 0.1.0, whose components keep loading: its log and
        // progress.
        world(&host.join("src/bindings/contract-0.1.0.wit"), "contract"),
    ];
    let mut imported = BTreeSet::new();
    for (resolve, world) in &worlds {
        let name = &resolve.worlds[*world].name;
        let component = Component::new(engine, probe(resolve, *world))
            .unwrap_or_else(|e| panic!("the probe of {name} compiles: {e:#}"));
        linker
            .instantiate_pre(&component)
            .unwrap_or_else(|e| panic!("the host's linker defines every import of {name}: {e:#}"));
        imported.extend(imported_functions(engine, &component));
    }

    let table: BTreeSet<&str> = BOUNDS.iter().map(|(name, _)| *name).collect();
    assert_eq!(table.len(), BOUNDS.len(), "BOUNDS names a function twice");
    for (name, bound) in BOUNDS {
        assert!(!bound.trim().is_empty(), "BOUNDS says nothing for {name}");
    }
    let missing: Vec<&str> = imported
        .iter()
        .map(String::as_str)
        .filter(|name| !table.contains(name))
        .collect();
    let extra: Vec<&str> = table
        .iter()
        .copied()
        .filter(|name| !imported.contains(*name))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{}",
        mismatch(&missing, &extra)
    );
}
