//! Disk work a host call hands to a blocking thread (a write and its fsync,
//! a copy): gated host-wide, so a burst of such calls cannot take every
//! blocking thread, and told when the call that asked has gone (its
//! deadline passed, its client left), so long work stops at its next step
//! instead of running on past the deadline.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Semaphore;

/// The most pieces of such work that run at once, host-wide; the rest wait
/// for a turn (a wait the caller's deadline ends).
pub const MAX_RUNNING: usize = 16;

static TURNS: Semaphore = Semaphore::const_new(MAX_RUNNING);

/// Whether the call that asked for a piece of work has gone: work that
/// takes many steps checks it between them.
#[derive(Clone, Debug, Default)]
pub struct Abandoned(Arc<AtomicBool>);

impl Abandoned {
    /// Whether the caller has gone.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Sets its flag when the waiting future is dropped.
struct SetOnDrop(Abandoned);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

/// Why a piece of work gave no answer.
#[derive(Debug, thiserror::Error)]
#[error("the host's blocking work failed: {0}")]
pub struct Failed(String);

/// Run `work` on a blocking thread once a turn is free, and wait for it.
/// If the returned future is dropped, `work`'s [`Abandoned`] is set: it may
/// stop at its next step (it cannot be stopped in a system call).
pub async fn run<T: Send + 'static>(
    work: impl FnOnce(&Abandoned) -> T + Send + 'static,
) -> Result<T, Failed> {
    let turn = TURNS.acquire().await.map_err(|e| Failed(e.to_string()))?;
    let abandoned = Abandoned::default();
    let _on_drop = SetOnDrop(abandoned.clone());
    tokio::task::spawn_blocking(move || {
        let _turn = turn;
        work(&abandoned)
    })
    .await
    .map_err(|e| Failed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn dropped_work_is_told_and_gives_its_turn_back() {
        let (told, heard) = std::sync::mpsc::channel();
        let waiting = run(move |abandoned| {
            while !abandoned.is_set() {
                std::thread::sleep(Duration::from_millis(1));
            }
            told.send(()).unwrap();
        });
        let _ = tokio::time::timeout(Duration::from_millis(20), waiting).await;
        tokio::task::spawn_blocking(move || heard.recv_timeout(Duration::from_secs(5)))
            .await
            .unwrap()
            .expect("the work saw it was abandoned");
        assert_eq!(run(|_| 7).await.unwrap(), 7);
    }
}
