//! A record of panics on every thread, so a panic the code under test
//! swallows (a tokio task's, a compile thread's) still fails the input.
//!
//! Each target runs its inputs on a thread named `fuzz-<target>-…` and its
//! async work on a runtime whose threads are named `fuzz-<target>`
//! ([`crate::fixture::runtime`]); a panic is charged to the target named by
//! its thread, or to whoever asks when the thread has no name at all (a
//! compile thread of wasmtime's).

use std::sync::{Mutex, Once, PoisonError};

/// One panic: the thread it happened on and its message.
#[derive(Debug, Clone)]
pub struct Panic {
    /// The thread's name (`<unnamed>` when it has none).
    pub thread: String,
    /// The panic message and where it was raised.
    pub message: String,
}

static PANICS: Mutex<Vec<Panic>> = Mutex::new(Vec::new());

/// Record every panic from now on (the previous hook still runs).
pub fn install() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let thread = std::thread::current().name().unwrap_or(UNNAMED).to_string();
            let payload = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string payload>".to_string());
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            PANICS
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Panic {
                    thread,
                    message: format!("{payload}{at}"),
                });
            previous(info);
        }));
    });
}

/// The name unnamed threads are recorded under.
const UNNAMED: &str = "<unnamed>";

/// Take the panics charged to `target`: those on its threads, and those on
/// unnamed threads.
pub fn take(target: &str) -> Vec<Panic> {
    let own = format!("fuzz-{target}");
    let mut all = PANICS.lock().unwrap_or_else(PoisonError::into_inner);
    let (mine, others): (Vec<Panic>, Vec<Panic>) = all.drain(..).partition(|p| {
        p.thread == UNNAMED
            || p.thread
                .strip_prefix(&own)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    });
    *all = others;
    mine
}
