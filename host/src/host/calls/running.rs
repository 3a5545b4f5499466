//! The calls running on this host, each with the session it runs in and a
//! way to end it: an operator ends one call, and ending a session ends
//! every call running in it. An ended call's future is dropped where it
//! stands (its sandbox with it) and the call answers why.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio::sync::watch;

/// Why a running call was ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Its session was ended.
    Session,
    /// Someone ended this call.
    Call,
}

/// The calls running on this host, by call id.
#[derive(Debug, Default)]
pub(crate) struct RunningCalls {
    calls: Mutex<HashMap<String, Entry>>,
    /// Numbers each start, so a guard removes only its own entry.
    started: AtomicU64,
}

#[derive(Debug)]
struct Entry {
    session: String,
    start: u64,
    end: watch::Sender<Option<Ending>>,
}

/// A running call's place in [`RunningCalls`]: taken out when dropped.
pub(crate) struct Running<'a> {
    calls: &'a RunningCalls,
    id: String,
    start: u64,
    ended: watch::Receiver<Option<Ending>>,
}

impl RunningCalls {
    /// Count the call `id` in `session` as running until the returned
    /// guard is dropped. A second call under the same id takes its place.
    pub(crate) fn start(&self, id: &str, session: &str) -> Running<'_> {
        let (end, ended) = watch::channel(None);
        let start = self.started.fetch_add(1, Ordering::Relaxed);
        let entry = Entry {
            session: session.to_string(),
            start,
            end,
        };
        self.lock().insert(id.to_string(), entry);
        Running {
            calls: self,
            id: id.to_string(),
            start,
            ended,
        }
    }

    /// End the call `id`: whether it was running here.
    pub(crate) fn end_call(&self, id: &str) -> bool {
        self.lock()
            .get(id)
            .is_some_and(|entry| entry.end.send(Some(Ending::Call)).is_ok())
    }

    /// End every call running in `session`: how many there were.
    pub(crate) fn end_session(&self, session: &str) -> usize {
        self.lock()
            .values()
            .filter(|entry| entry.session == session)
            .filter(|entry| entry.end.send(Some(Ending::Session)).is_ok())
            .count()
    }

    /// The session the running call `id` runs in.
    pub(crate) fn session_of(&self, id: &str) -> Option<String> {
        self.lock().get(id).map(|entry| entry.session.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Running<'_> {
    /// Completes when the call is ended, saying why; never otherwise.
    pub(crate) async fn ended(&mut self) -> Ending {
        loop {
            if let Some(ending) = *self.ended.borrow_and_update() {
                return ending;
            }
            if self.ended.changed().await.is_err() {
                // Its entry was replaced by a call under the same id.
                return std::future::pending().await;
            }
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut calls = self.calls.lock();
        // Only its own entry: not one a later call under its id put there.
        if calls
            .get(&self.id)
            .is_some_and(|entry| entry.start == self.start)
        {
            calls.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ending_a_session_ends_its_calls_and_no_other() {
        let calls = RunningCalls::default();
        let mut a = calls.start("call_a", "ses_1");
        let mut b = calls.start("call_b", "ses_1");
        let mut c = calls.start("call_c", "ses_2");
        assert_eq!(calls.session_of("call_c").as_deref(), Some("ses_2"));
        assert_eq!(calls.end_session("ses_1"), 2);
        assert_eq!(a.ended().await, Ending::Session);
        assert_eq!(b.ended().await, Ending::Session);
        let still = tokio::time::timeout(std::time::Duration::from_millis(20), c.ended()).await;
        assert!(still.is_err(), "the other session's call runs on");
        assert!(calls.end_call("call_c"));
        assert_eq!(c.ended().await, Ending::Call);
        drop((a, b, c));
        assert!(!calls.end_call("call_c"), "gone once it ended");
        assert_eq!(calls.end_session("ses_1"), 0);
    }
}
