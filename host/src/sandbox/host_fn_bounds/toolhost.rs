//! What bounds each function of the contract's own interfaces, toolhost:tool@0.2.2 and 0.1.0 a tool can import.

/// Each function and how it is bounded.
pub(super) const BOUNDS: &[(&str, &str)] = &[
    // toolhost:tool@0.2.2
    (
        "toolhost:tool/log@0.2.2#log",
        "sync, O(n) in the message (n ≤ fuel): cut to MAX_LOG_LINE_BYTES (4 KiB) into a new \
         string; at most MAX_LOG_LINES (1000) kept a call",
    ),
    (
        "toolhost:tool/progress@0.2.2#report",
        "sync, O(n) in the message (n ≤ fuel): cut to MAX_PROGRESS_MESSAGE_BYTES (1 KiB); at \
         most MAX_PROGRESS_REPORTS (256) a call reach the watcher",
    ),
    (
        "toolhost:tool/resource-updates@0.2.2#updated",
        "sync: an address over MAX_URI_BYTES (2 KiB) is refused before matching, which is linear \
         (regex) against the component's ≤ MAX_RESOURCES addresses and ≤ MAX_RESOURCE_TEMPLATES \
         templates; at most MAX_RESOURCE_UPDATES (64) announced a call",
    ),
    (
        "toolhost:tool/ask@0.2.2#elicit",
        "async: at most MAX_QUESTIONS_PER_CALL (16) a call; the message ≤ 4096 characters and the \
         form ≤ MAX_FORM_BYTES (64 KiB) before it is parsed; the wait, with the deadline paused, \
         shares one ask_timeout with the call's other questions",
    ),
    (
        "toolhost:tool/ask@0.2.2#sample",
        "async: at most 16 questions a call; 1 to MAX_SAMPLING_MESSAGES (64) messages and ≤ \
         MAX_SAMPLING_LIST (16) stop sequences and hints, all their bytes ≤ max_output_bytes, \
         before asking; the wait shares one ask_timeout with the call's other questions",
    ),
    (
        "toolhost:tool/ask@0.2.2#ask-all",
        "async: 1 to MAX_QUESTIONS_AT_ONCE (8) questions, each counted against the 16 a call \
         may ask and checked as elicit and sample check theirs, all their bytes ≤ \
         max_output_bytes, before asking; answers ≤ max_input_bytes together, ≤ MAX_ROOTS \
         (256) roots; the wait shares one ask_timeout with the call's other questions",
    ),
    (
        "toolhost:tool/context@0.2.2#state-root",
        "sync, O(1): a constant path, or none",
    ),
    (
        "toolhost:tool/context@0.2.2#workspace-dir",
        "sync, O(1): a constant path, or none",
    ),
    (
        "toolhost:tool/artifacts@0.2.2#save",
        "async: the bytes are charged to host_memory_mb first; name, media type and ≤ MAX_TAGS \
         tags are checked before any disk work; the write and its fsyncs are gated, within \
         session_artifacts_mb and MAX_ARTIFACTS; dropped at the deadline",
    ),
    (
        "toolhost:tool/artifacts@0.2.2#save-file",
        "async: the path is opened beneath a mount (the kernel refuses one over PATH_MAX); a gated \
         copy of at most the session's room left (session_artifacts_mb) that stops at its next \
         read once the call has gone",
    ),
    (
        "toolhost:tool/artifacts@0.2.2#list-artifacts",
        "async: a gated read of at most MAX_ARTIFACTS + 1 records; dropped at the deadline",
    ),
    (
        "toolhost:tool/metrics@0.2.2#counter-add",
        "sync, O(n) in the name and labels (n ≤ fuel): MAX_UPDATES_PER_CALL (10 000) a call; the \
         name ≤ 64 bytes before it is scanned, ≤ MAX_LABELS (4) before they are sorted; at most \
         MAX_METRICS × MAX_SERIES kept",
    ),
    (
        "toolhost:tool/metrics@0.2.2#histogram-record",
        "sync, O(n) in the name and labels (n ≤ fuel): MAX_UPDATES_PER_CALL (10 000) a call; the \
         name ≤ 64 bytes before it is scanned, ≤ MAX_LABELS (4) before they are sorted; at most \
         MAX_METRICS × MAX_SERIES kept",
    ),
    (
        "toolhost:tool/sessions@0.2.2#get-session",
        "async: channel and id ≤ MAX_NAME_BYTES (256) before the lookup, a map read or one Redis \
         round trip under its response timeout; dropped at the deadline",
    ),
    (
        "toolhost:tool/sessions@0.2.2#send",
        "async: MAX_SENDS_PER_CALL (16) a call; channel, key and id ≤ 256 bytes, the message ≤ \
         MAX_MESSAGE_BYTES (64 KiB, charged) and auth ≤ MAX_AUTH_BYTES (4 KiB) before the lookup; \
         a start's record is written gated; dropped at the deadline",
    ),
    (
        "toolhost:tool/reminders@0.2.2#schedule",
        "async: `at` ≤ 64 bytes, a message or input ≤ MAX_PAYLOAD_BYTES (64 KiB) before it is \
         parsed, a call's tool only if granted, its input checked with linear regexes; ≤ 64 \
         pending a session and 10 000 a host; the write is gated; dropped at the deadline",
    ),
    (
        "toolhost:tool/reminders@0.2.2#list-reminders",
        "async: a scan of ≤ MAX_PENDING (10 000) pending under a lock no disk work holds, ≤ \
         MAX_PENDING_PER_SESSION (64) returned; or one Redis round trip, dropped at the deadline",
    ),
    (
        "toolhost:tool/reminders@0.2.2#cancel-reminder",
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
];
