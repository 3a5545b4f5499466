//! How far a long call has got (`toolhost:tool/progress`).
//!
//! An MCP client that asked for progress sees each report as a progress
//! notification; the HTTP API's session stream sees a `call.progress` event.
//! `done` must grow from one report to the next; a report that does not,
//! and reports past the host's per-call cap, are dropped.
//!
//! ```no_run
//! for (i, page) in ["a", "b", "c"].iter().enumerate() {
//!     toolhost_sdk::progress::report(i as f64 + 1.0, Some(3.0), Some(&format!("page {page}")));
//! }
//! ```

/// Reports that `done` of `total` (when known) is done, with a message.
pub fn report(done: f64, total: Option<f64>, message: Option<&str>) {
    crate::bindings::toolhost::tool::progress::report(done, total, message);
}
