//! [`Calls`]: the host's job of keeping calls — what admits them, what they
//! may hold together, which run now and can be ended, what the reminders'
//! calls did, and who is told of each outcome. The pipeline (`crate::call`)
//! runs a call; this is what it finds on the host.

pub mod reminder_limits;
pub(crate) mod running;

use std::sync::{Arc, PoisonError, RwLock};

use self::reminder_limits::ReminderStats;
use self::running::RunningCalls;
use crate::admission::CallGate;
use crate::caps::ask::AskingSlots;
use crate::caps::workspace::open_files::FileSlots;
use crate::config::HostLimits;
use crate::envelope::CallResult;
use crate::error::CallError;

/// Told of every call's outcome, whichever surface made the call (the
/// server's metrics): see `Host::observe`.
pub trait CallObserver: Send + Sync {
    /// A call of `tool` (the name asked for) finished with `outcome`.
    fn finished(&self, tool: &str, outcome: Result<&CallResult, &CallError>);
}

/// What the host keeps of its calls: each part as `[limits]` was when it
/// started.
pub(crate) struct Calls {
    /// Admits calls to run tool code.
    pub gate: CallGate,
    /// Workspace files every call together may hold open.
    pub file_slots: FileSlots,
    /// Slots for calls waiting for an answer.
    pub asking_slots: AskingSlots,
    /// The calls running here, each of which can be ended.
    pub running: RunningCalls,
    /// What bounds the calls reminders make here, and what they did.
    pub reminder_stats: ReminderStats,
    /// Told of every call's outcome.
    observers: RwLock<Vec<Arc<dyn CallObserver>>>,
}

impl Calls {
    /// No call yet, under `limits`.
    pub fn new(limits: &HostLimits) -> Self {
        Self {
            gate: limits.call_gate(),
            file_slots: FileSlots::new(limits.open_files()),
            asking_slots: AskingSlots::new(limits.asking_calls()),
            running: RunningCalls::default(),
            reminder_stats: ReminderStats::default(),
            observers: RwLock::default(),
        }
    }

    /// Tell `observer` of every call's outcome from now on.
    pub fn observe(&self, observer: Arc<dyn CallObserver>) {
        self.observers
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push(observer);
    }

    /// Tell every observer of one call's outcome.
    pub fn tell_observers(&self, tool: &str, outcome: Result<&CallResult, &CallError>) {
        let observers = self
            .observers
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        for observer in observers.iter() {
            observer.finished(tool, outcome);
        }
    }
}
