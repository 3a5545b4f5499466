//! What bounds each function of wasi:http a tool can import.

use super::NO_INCOMING_REQUEST;

/// Each function and how it is bounded.
pub(super) const BOUNDS: &[(&str, &str)] = &[
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
