//! What bounds each function of wasi:keyvalue a tool can import.

/// Each function and how it is bounded.
pub(super) const BOUNDS: &[(&str, &str)] = &[
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
];
