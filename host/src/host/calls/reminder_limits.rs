//! What bounds the work reminders make: each session's calls fired by
//! reminders draw on a budget that refills at a steady rate (a burst of
//! due reminders runs, a loop of them slows to the rate), at most
//! [`MAX_RUNNING`] reminder calls run on a server at once, and the
//! server counts what its reminders did for `/metrics`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::Semaphore;

use crate::session::reminders::MAX_PENDING_PER_SESSION;

/// How many reminder calls a session may make at once before the rate
/// holds it: as many as it may have pending.
pub const BURST: u32 = MAX_PENDING_PER_SESSION as u32;
/// How often a session's budget gains one reminder call.
pub const REFILL_EVERY: Duration = Duration::from_secs(1);
/// The most reminder calls that run on a server at once; the rest wait.
pub const MAX_RUNNING: usize = 4;

/// Each session's budget of reminder calls.
#[derive(Debug, Default)]
pub(crate) struct SessionRates {
    budgets: HashMap<String, Budget>,
}

#[derive(Debug)]
struct Budget {
    left: u32,
    /// When `left` was last brought up to date.
    at: DateTime<Utc>,
}

impl SessionRates {
    /// Take one reminder call from `session`'s budget at `now`, or say when
    /// the next one is there.
    pub(crate) fn take(&mut self, session: &str, now: DateTime<Utc>) -> Result<(), DateTime<Utc>> {
        let every = chrono::TimeDelta::from_std(REFILL_EVERY).unwrap_or(chrono::TimeDelta::MAX);
        let budget = self.budgets.entry(session.to_string()).or_insert(Budget {
            left: BURST,
            at: now,
        });
        let gained = (now - budget.at).num_milliseconds().max(0) / every.num_milliseconds().max(1);
        if gained > 0 {
            budget.left = BURST.min(
                budget
                    .left
                    .saturating_add(u32::try_from(gained).unwrap_or(u32::MAX)),
            );
            budget.at += every * i32::try_from(gained).unwrap_or(i32::MAX);
        }
        if budget.left == 0 {
            return Err(budget.at + every);
        }
        budget.left -= 1;
        Ok(())
    }

    /// Forget the budgets that are full again at `now`: a session that
    /// stopped firing reminders costs nothing.
    pub(crate) fn prune(&mut self, now: DateTime<Utc>) {
        let full_after = REFILL_EVERY.saturating_mul(BURST);
        let full_after = chrono::TimeDelta::from_std(full_after).unwrap_or(chrono::TimeDelta::MAX);
        self.budgets
            .retain(|_, budget| now - budget.at < full_after);
    }
}

/// What a server's reminders did, for `/metrics`.
#[derive(Debug)]
pub struct ReminderStats {
    /// Turns for reminder calls.
    pub(crate) turns: Semaphore,
    running: AtomicU64,
    waiting: AtomicU64,
    calls: AtomicU64,
    messages: AtomicU64,
    deferred: AtomicU64,
}

impl Default for ReminderStats {
    fn default() -> Self {
        Self {
            turns: Semaphore::new(MAX_RUNNING),
            running: AtomicU64::new(0),
            waiting: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            messages: AtomicU64::new(0),
            deferred: AtomicU64::new(0),
        }
    }
}

/// A snapshot of [`ReminderStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReminderFigures {
    /// Reminder calls running now.
    pub running: u64,
    /// Reminder calls waiting for a turn now.
    pub waiting: u64,
    /// Reminders that made a call, since the server started.
    pub calls: u64,
    /// Reminders that delivered a message, since the server started.
    pub messages: u64,
    /// Reminders put off because their session's budget was spent.
    pub deferred: u64,
}

impl ReminderStats {
    /// What the counters hold now.
    pub fn figures(&self) -> ReminderFigures {
        let read = |n: &AtomicU64| n.load(Ordering::Relaxed);
        ReminderFigures {
            running: read(&self.running),
            waiting: read(&self.waiting),
            calls: read(&self.calls),
            messages: read(&self.messages),
            deferred: read(&self.deferred),
        }
    }

    pub(crate) fn message_delivered(&self) {
        self.messages.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn deferred(&self) {
        self.deferred.fetch_add(1, Ordering::Relaxed);
    }

    /// Wait for a turn to make a reminder's call, counted as waiting and
    /// then as running until the returned guard is dropped.
    pub(crate) async fn turn(&self) -> Turn<'_> {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let permit = self.turns.acquire().await.ok();
        self.waiting.fetch_sub(1, Ordering::Relaxed);
        self.running.fetch_add(1, Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        Turn {
            stats: self,
            _permit: permit,
        }
    }
}

/// A reminder call's turn: it runs while this is held.
pub(crate) struct Turn<'a> {
    stats: &'a ReminderStats,
    _permit: Option<tokio::sync::SemaphorePermit<'a>>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.stats.running.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_bursts_then_runs_at_the_rate() {
        let mut rates = SessionRates::default();
        let start = Utc::now();
        for _ in 0..BURST {
            rates.take("ses_a", start).unwrap();
        }
        let next = rates.take("ses_a", start).unwrap_err();
        assert_eq!(next, start + chrono::TimeDelta::seconds(1));
        assert!(
            rates.take("ses_b", start).is_ok(),
            "another session's budget is its own"
        );
        rates.take("ses_a", next).unwrap();
        assert!(rates.take("ses_a", next).is_err());
        let later = next + chrono::TimeDelta::seconds(i64::from(BURST) + 5);
        rates.prune(later);
        assert!(rates.budgets.is_empty(), "full budgets are forgotten");
    }
}
