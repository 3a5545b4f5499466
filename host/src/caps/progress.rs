//! `toolhost:tool/progress`: how far a long call has got.
//!
//! Always served, like `log`: reporting progress reaches nothing outside the
//! host. A report is kept when `done` is finite, not negative and more than
//! the last kept one, up to [`MAX_PROGRESS_REPORTS`] a call; the message is
//! cut to [`MAX_PROGRESS_MESSAGE_BYTES`]. Kept reports go to the call's
//! [`CallWatcher`] (the pipeline records them as `call.progress` events and
//! hands them on to the surface's watcher); the others are dropped, and
//! counted in the trace once the call ends.

use std::sync::{Arc, Mutex, PoisonError};

use wasmtime::component::HasSelf;

use super::log::cut;
use super::{CallScope, CallWatcher, Capability, Grants, Outside};
use crate::bindings::toolhost::tool::progress::Host;
use crate::bindings::v0_1::toolhost::tool::progress as v0_1;

/// The most progress reports one call keeps.
pub const MAX_PROGRESS_REPORTS: usize = 256;
/// The longest progress message kept, in bytes; longer ones are cut.
pub const MAX_PROGRESS_MESSAGE_BYTES: usize = 1024;

pub use crate::envelope::Progress;

#[derive(Debug, Default)]
struct Reports {
    last: Option<f64>,
    kept: usize,
    dropped: usize,
}

/// One call's progress, shared by its instances (a retry continues from
/// the last report). Cloning shares it.
#[derive(Clone, Default)]
pub struct ProgressFeed {
    reports: Arc<Mutex<Reports>>,
    watcher: Option<Arc<dyn CallWatcher>>,
}

impl std::fmt::Debug for ProgressFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressFeed")
            .field("reports", &self.reports)
            .field("watched", &self.watcher.is_some())
            .finish()
    }
}

/// Always served: an instance reports to its call's feed, and outside a
/// call to none.
impl Capability for ProgressFeed {
    fn for_call(_: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        Ok(scope.progress.clone())
    }

    fn outside_a_call(_: &Outside<'_>) -> anyhow::Result<Self> {
        Ok(Self::default())
    }
}

impl ProgressFeed {
    /// A feed whose accepted reports `watcher` sees.
    pub fn watched(watcher: Option<Arc<dyn CallWatcher>>) -> Self {
        Self {
            watcher,
            ..Self::default()
        }
    }

    /// How many reports were dropped: not growing, not finite, or past the cap.
    pub fn dropped(&self) -> usize {
        self.lock().dropped
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Reports> {
        self.reports.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keep `done` of `total` if it is a valid next report.
    fn accept(&self, done: f64, total: Option<f64>, message: Option<String>) -> Option<Progress> {
        {
            let mut reports = self.lock();
            let grows = reports.last.is_none_or(|last| done > last);
            if !(done.is_finite() && done >= 0.0 && grows && reports.kept < MAX_PROGRESS_REPORTS) {
                reports.dropped += 1;
                return None;
            }
            reports.last = Some(done);
            reports.kept += 1;
        }
        let message = message.map(|mut text| {
            cut(&mut text, MAX_PROGRESS_MESSAGE_BYTES);
            text
        });
        Some(Progress {
            progress: done,
            total: total.filter(|t| t.is_finite() && *t >= 0.0),
            message,
        })
    }
}

impl Host for ProgressFeed {
    fn report(&mut self, done: f64, total: Option<f64>, message: Option<String>) {
        if let Some(report) = self.accept(done, total, message)
            && let Some(watcher) = &self.watcher
        {
            watcher.progress(&report);
        }
    }
}

/// Contract 0.1.0's `progress`, the same interface.
impl v0_1::Host for ProgressFeed {
    fn report(&mut self, done: f64, total: Option<f64>, message: Option<String>) {
        Host::report(self, done, total, message);
    }
}

/// Link `toolhost:tool/progress`, of every contract version, into a linker
/// whose store data holds a [`ProgressFeed`].
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut ProgressFeed,
) -> wasmtime::Result<()> {
    crate::bindings::toolhost::tool::progress::add_to_linker::<T, HasSelf<ProgressFeed>>(
        linker, get,
    )?;
    v0_1::add_to_linker::<T, HasSelf<ProgressFeed>>(linker, get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Seen(Mutex<Vec<Progress>>);

    impl CallWatcher for Seen {
        fn progress(&self, report: &Progress) {
            self.0.lock().unwrap().push(report.clone());
        }
    }

    #[test]
    fn only_growing_finite_reports_are_kept_up_to_the_cap() {
        let seen = Arc::new(Seen::default());
        let mut feed = ProgressFeed::watched(Some(seen.clone()));
        feed.report(1.0, Some(10.0), Some("one".into()));
        feed.report(1.0, Some(10.0), None); // not growing
        feed.report(0.5, None, None); // going back
        feed.report(f64::NAN, None, None);
        feed.report(f64::INFINITY, None, None);
        feed.report(
            2.0,
            Some(f64::NAN),
            Some("é".repeat(MAX_PROGRESS_MESSAGE_BYTES)),
        );
        let kept = seen.0.lock().unwrap().clone();
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].message.as_deref(), Some("one"));
        assert_eq!(
            kept[1].total, None,
            "a total that is not a number is left out"
        );
        let message = kept[1].message.as_deref().unwrap();
        assert!(message.len() <= MAX_PROGRESS_MESSAGE_BYTES + '…'.len_utf8());
        assert_eq!(feed.dropped(), 4);

        for i in 0..MAX_PROGRESS_REPORTS {
            feed.report(3.0 + i as f64, None, None);
        }
        assert_eq!(seen.0.lock().unwrap().len(), MAX_PROGRESS_REPORTS);
        assert_eq!(feed.dropped(), 4 + 2, "the two past the cap");
    }
}
