//! The admission limit: how many calls run tool code at once, and how many
//! may wait for a slot. The queue is bounded twice over, in length and in
//! time: a call past either bound is refused as [`Overloaded`] and never
//! queued without limit.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why a call was refused a slot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Overloaded {
    /// Every slot was taken and the queue was full.
    #[error(
        "the host is overloaded: {running} calls are running and {queued} are waiting, \
         the most it queues (max_concurrent_calls, max_queued_calls); retry later"
    )]
    QueueFull {
        /// The running calls (`max_concurrent_calls`).
        running: u32,
        /// The waiting calls (`max_queued_calls`).
        queued: u32,
    },
    /// The call waited for a slot for the whole queue timeout.
    #[error(
        "the host is overloaded: no call slot freed up within {} ms (queue_timeout_ms); retry later",
        .waited.as_millis()
    )]
    TimedOut {
        /// How long it waited.
        waited: Duration,
    },
    /// As many calls as a server parks wait for an approval or a custom
    /// tool's result already.
    #[error(
        "the host is overloaded: {max} calls already wait for an approval or a custom tool's \
         result; answer some, or retry later"
    )]
    TooManyWaiting {
        /// How many may wait.
        max: usize,
    },
}

/// A running call's slot; dropping it lets the next queued call in.
#[derive(Debug)]
pub struct CallSlot {
    _permit: OwnedSemaphorePermit,
}

/// The gate every call passes before it runs tool code.
#[derive(Debug)]
pub struct CallGate {
    slots: Arc<Semaphore>,
    running: u32,
    max_queued: u32,
    queue_timeout: Duration,
    waiting: AtomicU32,
}

impl CallGate {
    /// A gate letting `running` calls run at once (at least one) and
    /// `max_queued` wait for a slot, each at most `queue_timeout`
    /// (`[limits]` gives them: `HostLimits::call_gate`).
    pub fn new(running: u32, max_queued: u32, queue_timeout: Duration) -> Self {
        let running = running.max(1);
        Self {
            slots: Arc::new(Semaphore::new(running as usize)),
            running,
            max_queued,
            queue_timeout,
            waiting: AtomicU32::new(0),
        }
    }

    /// A slot now, or after waiting in the queue; refused when the queue is
    /// full or the wait runs past the queue timeout.
    pub async fn admit(&self) -> Result<CallSlot, Overloaded> {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return Ok(CallSlot { _permit: permit });
        }
        let _waiter =
            Waiter::join(&self.waiting, self.max_queued).ok_or(Overloaded::QueueFull {
                running: self.running,
                queued: self.max_queued,
            })?;
        let started = Instant::now();
        match tokio::time::timeout(self.queue_timeout, self.slots.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(CallSlot { _permit: permit }),
            // The semaphore is never closed; a closed one admits nobody.
            Ok(Err(_)) | Err(_) => Err(Overloaded::TimedOut {
                waited: started.elapsed(),
            }),
        }
    }

    /// Calls running tool code now.
    pub fn running(&self) -> u32 {
        self.running - self.slots.available_permits() as u32
    }

    /// Calls waiting for a slot now.
    pub fn waiting(&self) -> u32 {
        self.waiting.load(Ordering::Relaxed)
    }
}

/// One place in the queue, given back on drop.
struct Waiter<'a>(&'a AtomicU32);

impl<'a> Waiter<'a> {
    fn join(waiting: &'a AtomicU32, max: u32) -> Option<Self> {
        waiting
            .try_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(waiting))
    }
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(running: u32, queued: u32, timeout_ms: u64) -> Arc<CallGate> {
        Arc::new(CallGate::new(
            running,
            queued,
            Duration::from_millis(timeout_ms),
        ))
    }

    #[tokio::test]
    async fn a_full_queue_refuses_at_once() {
        let gate = gate(1, 1, 60_000);
        let held = gate.admit().await.expect("first call runs");
        let queued = tokio::spawn({
            let gate = gate.clone();
            async move { gate.admit().await.map(drop) }
        });
        while gate.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        let refused = gate.admit().await.expect_err("the queue is full");
        assert_eq!(
            refused,
            Overloaded::QueueFull {
                running: 1,
                queued: 1
            }
        );
        assert!(
            refused.to_string().contains("max_queued_calls"),
            "{refused}"
        );
        drop(held);
        queued
            .await
            .expect("join")
            .expect("the queued call runs next");
        assert_eq!((gate.running(), gate.waiting()), (0, 0));
    }

    #[tokio::test]
    async fn a_wait_past_the_queue_timeout_is_refused() {
        let gate = gate(1, 8, 50);
        let _held = gate.admit().await.expect("first call runs");
        let refused = gate.admit().await.expect_err("times out");
        assert!(
            matches!(refused, Overloaded::TimedOut { waited } if waited >= Duration::from_millis(50)),
            "{refused:?}"
        );
        assert!(
            refused.to_string().contains("queue_timeout_ms"),
            "{refused}"
        );
        assert_eq!(gate.waiting(), 0, "the timed-out waiter left the queue");
    }

    #[tokio::test]
    async fn no_queue_means_refusal_when_busy() {
        let gate = gate(2, 0, 1000);
        let _a = gate.admit().await.expect("slot 1");
        let _b = gate.admit().await.expect("slot 2");
        assert!(matches!(
            gate.admit().await,
            Err(Overloaded::QueueFull { .. })
        ));
        assert_eq!(gate.running(), 2);
    }
}
