//! Log lines that go into the call's trace (`toolhost:tool/log`).
//!
//! Unlike stdout and stderr, which are captured as raw text, these lines are
//! structured: each has a level and shows up in the trace next to the call.
//! Lines past the host's per-call cap are dropped.
//!
//! ```no_run
//! toolhost_sdk::log::info("fetched 3 pages");
//! toolhost_sdk::log::warn(format!("retrying {}", "https://example.com"));
//! ```

pub use crate::bindings::toolhost::tool::log::Level;

/// Adds a line at `level` to the call's trace.
pub fn log(level: Level, message: impl AsRef<str>) {
    crate::bindings::toolhost::tool::log::log(level, message.as_ref());
}

/// Adds a debug line: fine detail.
pub fn debug(message: impl AsRef<str>) {
    log(Level::Debug, message);
}

/// Adds an info line: normal operation.
pub fn info(message: impl AsRef<str>) {
    log(Level::Info, message);
}

/// Adds a warning: something unexpected that the tool handled.
pub fn warn(message: impl AsRef<str>) {
    log(Level::Warn, message);
}

/// Adds an error line: a failure.
pub fn error(message: impl AsRef<str>) {
    log(Level::Error, message);
}
