//! What bounds each function of wasi:io, wasi:clocks, wasi:random and wasi:cli a tool can import.

/// Each function and how it is bounded.
pub(super) const BOUNDS: &[(&str, &str)] = &[
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
];
