//! Loads from the fleet's records that failed lately: a request naming one
//! is answered at once instead of compiling its tools again.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a failed load is not tried again.
const RETRY_AFTER: Duration = Duration::from_secs(10);

/// What failed to load lately, by a name the caller chooses, and when.
#[derive(Debug, Default)]
pub(in crate::host) struct FailedLoads {
    failed: Mutex<HashMap<String, Instant>>,
}

impl FailedLoads {
    /// Whether loading `what` failed less than [`RETRY_AFTER`] ago.
    pub(in crate::host) fn failed_lately(&self, what: &str) -> bool {
        let failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
        failed
            .get(what)
            .is_some_and(|at| at.elapsed() < RETRY_AFTER)
    }

    /// Loading `what` failed just now. Entries older than the wait are
    /// dropped here, so the map holds only what failed lately.
    pub(in crate::host) fn failed(&self, what: String) {
        let mut failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
        failed.retain(|_, at| at.elapsed() < RETRY_AFTER);
        failed.insert(what, Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_remembered_for_a_while_by_its_name() {
        let loads = FailedLoads::default();
        assert!(!loads.failed_lately("a/1"));
        loads.failed("a/1".into());
        assert!(loads.failed_lately("a/1"));
        assert!(!loads.failed_lately("a/2"));
        loads
            .failed
            .lock()
            .unwrap()
            .insert("a/1".into(), Instant::now() - RETRY_AFTER);
        assert!(!loads.failed_lately("a/1"));
        loads.failed("b/1".into());
        assert!(!loads.failed.lock().unwrap().contains_key("a/1"));
    }
}
