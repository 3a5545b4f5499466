//! A call's deadline, which stops while the call waits for an answer from a
//! person or a model (`toolhost:tool/ask`) and goes on from where it was
//! once the answer comes. Every instance of the call (its attempts) shares
//! it: the epoch callback reads it, the host's own timer waits for it.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// A call's deadline. Cloning the `Arc` shares it.
#[derive(Debug)]
pub(crate) struct Deadline {
    state: Mutex<State>,
    /// Woken when a wait ends, for the timer to look again.
    resumed: Notify,
}

#[derive(Debug)]
struct State {
    at: Instant,
    /// Waits in progress (one guest thread: 0 or 1).
    waits: usize,
}

impl Deadline {
    /// A deadline at `at`.
    pub fn new(at: Instant) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State { at, waits: 0 }),
            resumed: Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// When it passes, as it stands (a wait in progress will push it back).
    pub fn at(&self) -> Instant {
        self.lock().at
    }

    /// Whether it has passed: never while the call waits for an answer.
    pub fn passed(&self) -> bool {
        let state = self.lock();
        state.waits == 0 && Instant::now() >= state.at
    }

    /// Stop the clock until the returned guard drops; the deadline then
    /// moves back by the time waited.
    pub fn pause(self: &Arc<Self>) -> Paused {
        self.lock().waits += 1;
        Paused {
            deadline: Arc::clone(self),
            since: Instant::now(),
        }
    }

    /// Resolve once the deadline, plus `grace`, has passed while the call
    /// was not waiting.
    pub async fn expired(&self, grace: Duration) {
        loop {
            // Registered before looking, so a wait that ends in between
            // still wakes this loop.
            let resumed = self.resumed.notified();
            let (at, waiting) = {
                let state = self.lock();
                (state.at + grace, state.waits > 0)
            };
            if waiting {
                resumed.await;
                continue;
            }
            tokio::select! {
                () = tokio::time::sleep_until(at.into()) => {
                    let state = self.lock();
                    if state.waits == 0 && Instant::now() >= state.at + grace {
                        return;
                    }
                }
                () = resumed => {}
            }
        }
    }
}

/// A wait in progress: dropping it starts the clock again.
#[must_use = "the clock starts again when this drops"]
pub(crate) struct Paused {
    deadline: Arc<Deadline>,
    since: Instant,
}

impl Drop for Paused {
    fn drop(&mut self) {
        {
            let mut state = self.deadline.lock();
            state.at += self.since.elapsed();
            state.waits = state.waits.saturating_sub(1);
        }
        self.deadline.resumed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wait_moves_the_deadline_back_by_its_length() {
        let deadline = Deadline::new(Instant::now() + Duration::from_millis(100));
        let expired = deadline.expired(Duration::ZERO);
        tokio::pin!(expired);
        let pause = deadline.pause();
        tokio::select! {
            () = &mut expired => panic!("expired while waiting"),
            () = tokio::time::sleep(Duration::from_millis(300)) => {}
        }
        assert!(!deadline.passed(), "never passed while waiting");
        drop(pause);
        let left = deadline.at().saturating_duration_since(Instant::now());
        assert!(left > Duration::from_millis(50), "{left:?} left");
        expired.await;
        assert!(deadline.passed());
    }
}
