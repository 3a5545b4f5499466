//! Workspace files held open: a slot of the host's per descriptor, taken
//! before the file is opened and given back when the guest drops it.
//!
//! One call may hold at most `max_handles` descriptors (each is a handle),
//! but every call together could still use up the process's descriptors,
//! and then the server's `accept`, the key-value store and the compile
//! cache fail for everyone. [`FileSlots`] is the host-wide cap
//! (`[limits] max_open_files`, held to half the process's open-file limit);
//! [`OpenFiles`] is one instance's share of it, whose slots all go back
//! when its Store is dropped.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;

use crate::caps::log::TraceLog;
use crate::usage::{Limit, Meter};

/// The host-wide slots for tools' open workspace files and listings.
#[derive(Debug, Clone)]
pub struct FileSlots {
    slots: Arc<Semaphore>,
    cap: u32,
}

impl FileSlots {
    /// `configured` slots, or half the process's soft open-file limit when
    /// that is fewer, so the host always keeps descriptors of its own.
    pub fn new(configured: u32) -> Self {
        Self::with_cap(configured.min(half_the_process_limit()))
    }

    /// Exactly `cap` slots, whatever the process's limit.
    pub fn with_cap(cap: u32) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(cap as usize)),
            cap,
        }
    }

    /// The cap in force.
    pub fn cap(&self) -> u32 {
        self.cap
    }

    /// How many slots are taken now.
    pub fn in_use(&self) -> u32 {
        self.cap
            .saturating_sub(u32::try_from(self.slots.available_permits()).unwrap_or(u32::MAX))
    }
}

/// Half the soft `RLIMIT_NOFILE`, or no bound when it cannot be read.
fn half_the_process_limit() -> u32 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct passed.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return u32::MAX;
    }
    u32::try_from(limit.rlim_cur / 2).unwrap_or(u32::MAX)
}

/// The workspace files one instance holds open, each with its slot, by
/// the handle the guest holds.
pub struct OpenFiles {
    slots: FileSlots,
    held: HashMap<u32, OwnedSemaphorePermit>,
    refused: bool,
}

impl OpenFiles {
    /// None held yet, drawing on `slots`.
    pub fn new(slots: FileSlots) -> Self {
        Self {
            slots,
            held: HashMap::new(),
            refused: false,
        }
    }

    /// A slot for one more open file, taken before it is opened; past the
    /// host-wide cap, `busy` (the first refusal is traced and named in the
    /// receipt).
    pub fn take(&mut self, meter: &Meter, trace: &TraceLog) -> Result<Slot, ErrorCode> {
        match Arc::clone(&self.slots.slots).try_acquire_owned() {
            Ok(permit) => Ok(Slot(permit)),
            Err(_) => {
                let cap = self.slots.cap;
                meter.hit(Limit::OpenFiles, u64::from(cap));
                if !std::mem::replace(&mut self.refused, true) {
                    trace.host(format!(
                        "open-file cap hit: every tool together holds {cap} workspace files \
                         (max_open_files); this open and later ones get `busy`"
                    ));
                }
                Err(ErrorCode::Busy)
            }
        }
    }

    /// Keep `slot` while the guest holds the handle `rep`.
    pub fn hold(&mut self, rep: u32, slot: Slot, meter: &Meter) {
        self.held.insert(rep, slot.0);
        meter.files_open(self.held.len());
    }

    /// The guest dropped the handle `rep`: its slot, if it had one, goes
    /// back.
    pub fn release(&mut self, rep: u32) {
        self.held.remove(&rep);
    }
}

/// One host-wide slot, taken for a file about to be opened.
pub struct Slot(OwnedSemaphorePermit);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_shared_by_every_instance_and_given_back() {
        let slots = FileSlots::with_cap(2);
        let (meter, trace) = (Meter::new(Default::default()), TraceLog::default());
        let mut first = OpenFiles::new(slots.clone());
        let mut second = OpenFiles::new(slots.clone());
        let slot = first.take(&meter, &trace).unwrap();
        first.hold(1, slot, &meter);
        let slot = second.take(&meter, &trace).unwrap();
        second.hold(1, slot, &meter);
        assert_eq!(slots.in_use(), 2);
        assert_eq!(first.take(&meter, &trace).err(), Some(ErrorCode::Busy));
        let usage = meter.usage(Default::default(), 1, Default::default());
        assert_eq!(
            usage.limit.map(|l| (l.name, l.value)),
            Some((Limit::OpenFiles, 2))
        );
        assert_eq!(usage.peak_files_open, 1);
        first.release(1);
        assert_eq!(slots.in_use(), 1);
        drop(second);
        assert_eq!(slots.in_use(), 0);
    }

    #[test]
    fn a_refused_slot_is_traced_once() {
        let (meter, trace) = (Meter::new(Default::default()), TraceLog::default());
        let mut files = OpenFiles::new(FileSlots::with_cap(0));
        for _ in 0..3 {
            assert!(files.take(&meter, &trace).is_err());
        }
        assert_eq!(trace.snapshot().0.len(), 1);
    }

    #[test]
    fn the_cap_keeps_half_the_processs_descriptors() {
        assert!(FileSlots::new(u32::MAX).cap() <= half_the_process_limit());
        assert_eq!(FileSlots::new(3).cap(), 3);
    }
}
