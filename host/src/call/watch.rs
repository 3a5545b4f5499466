//! What a running call reports before it ends: each progress report is
//! recorded in the session as a `call.progress` event, then handed to the
//! surface's own watcher (which sees the log lines directly).

use std::sync::Arc;

use crate::caps::CallWatcher;
use crate::caps::progress::Progress;
use crate::envelope::{CallProgress, CallRef};
use crate::session::{EventData, EventKind, Session};

/// The watcher a call's progress reports go to.
pub(super) struct Watch {
    pub(super) session: Arc<Session>,
    pub(super) call: CallRef,
    pub(super) surface: Option<Arc<dyn CallWatcher>>,
}

impl CallWatcher for Watch {
    fn progress(&self, report: &Progress) {
        self.session.events().emit(
            EventKind::CallProgress,
            EventData::Progress(Arc::new(CallProgress {
                call: self.call.clone(),
                report: report.clone(),
            })),
        );
        if let Some(surface) = &self.surface {
            surface.progress(report);
        }
    }
}
