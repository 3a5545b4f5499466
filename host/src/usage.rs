//! What a call makes the host spend: the per-call host-memory budget, and
//! the receipt (`usage`) every call result carries.
//!
//! One [`Meter`] serves every attempt of a call. Host functions that keep
//! memory for the guest (a compare-and-swap snapshot, a batch of key-value
//! values) [`Meter::charge`] it before they allocate and give it back when it
//! is freed; past the budget the guest gets an error it can see. Memory that
//! wasmtime-wasi and wasmtime-wasi-http keep (header maps, body buffers,
//! resource table entries) is bounded by handle count times a per-handle
//! share instead: see [`HostBudget`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use serde::Serialize;

/// Host memory one call may hold by default, in MiB: a thousand 32 KiB header
/// maps, or 32 one-MiB key-value values.
pub const DEFAULT_HOST_MEMORY_MB: u64 = 32;
/// Resource handles one call may hold at once by default. The example tools
/// in Rust, Python and TypeScript hold well under a hundred.
pub const DEFAULT_MAX_HANDLES: u32 = 1024;

/// The host-side resources one call may hold, from `[limits]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostBudget {
    /// Host memory the call may hold at once, in bytes (`host_memory_mb`).
    pub bytes: usize,
    /// Resource handles the call may hold at once (`max_handles`).
    pub handles: u32,
}

impl Default for HostBudget {
    fn default() -> Self {
        Self {
            bytes: (DEFAULT_HOST_MEMORY_MB << 20) as usize,
            handles: DEFAULT_MAX_HANDLES,
        }
    }
}

impl HostBudget {
    /// What each handle may hold of memory wasmtime-wasi-http keeps (a header
    /// map, a body's buffer): `handles` of them fit in `bytes`.
    pub fn per_handle_bytes(&self) -> usize {
        self.bytes / (self.handles.max(1) as usize)
    }

    /// The most data one guest-to-host call may copy into the host
    /// (wasmtime's hostcall fuel): the budget, or the output cap when that
    /// is larger, so a result at the cap can always be returned.
    pub fn hostcall_bytes(&self, output_bytes: usize) -> usize {
        self.bytes.max(output_bytes.saturating_mul(2))
    }
}

/// What one instance may use, and the meter its use is counted in.
#[derive(Debug, Clone)]
pub struct CallBounds {
    /// Its linear memories together, in bytes (`memory_mb`).
    pub memory_bytes: usize,
    /// What it may make the host hold.
    pub host: HostBudget,
    /// Where it is counted (shared by every attempt of a call).
    pub meter: Arc<Meter>,
    /// The call's output cap, which one guest-to-host copy must fit.
    pub output_bytes: usize,
}

/// A request for host memory past the call's budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "host memory cap hit: {what} needs {needed} bytes but the call already holds {held} of its \
     {} MiB (host_memory_mb)",
    .limit >> 20
)]
pub struct OverBudget {
    /// What asked.
    pub what: String,
    /// How many bytes it asked for.
    pub needed: usize,
    /// How many the call held already.
    pub held: usize,
    /// The budget.
    pub limit: usize,
}

/// The running count of what one call spends, shared by its attempts.
#[derive(Debug)]
pub struct Meter {
    host_limit: usize,
    host_held: AtomicUsize,
    host_peak: AtomicUsize,
    memory_peak: AtomicUsize,
    kv_ops: AtomicU32,
    kv_bytes_read: AtomicU64,
    kv_bytes_written: AtomicU64,
    output_bytes: AtomicUsize,
    files_opened: AtomicU32,
    files_open_peak: AtomicU32,
    artifacts_saved: AtomicU32,
    artifact_bytes: AtomicU64,
    metric_updates: AtomicU32,
    messages_sent: AtomicU32,
    reminders_scheduled: AtomicU32,
    epoch_ticks: AtomicU64,
    sandbox: std::sync::OnceLock<SandboxUsage>,
    limit_hit: std::sync::OnceLock<LimitHit>,
}

impl Meter {
    /// A meter for a call that may hold `budget.bytes` of host memory.
    pub fn new(budget: HostBudget) -> Arc<Self> {
        Arc::new(Self {
            host_limit: budget.bytes,
            host_held: AtomicUsize::new(0),
            host_peak: AtomicUsize::new(0),
            memory_peak: AtomicUsize::new(0),
            kv_ops: AtomicU32::new(0),
            kv_bytes_read: AtomicU64::new(0),
            kv_bytes_written: AtomicU64::new(0),
            output_bytes: AtomicUsize::new(0),
            files_opened: AtomicU32::new(0),
            files_open_peak: AtomicU32::new(0),
            artifacts_saved: AtomicU32::new(0),
            artifact_bytes: AtomicU64::new(0),
            metric_updates: AtomicU32::new(0),
            messages_sent: AtomicU32::new(0),
            reminders_scheduled: AtomicU32::new(0),
            epoch_ticks: AtomicU64::new(0),
            sandbox: std::sync::OnceLock::new(),
            limit_hit: std::sync::OnceLock::new(),
        })
    }

    /// The host memory budget, in bytes.
    pub fn host_limit(&self) -> usize {
        self.host_limit
    }

    /// Take `bytes` of the budget for `what` until the returned [`Charge`]
    /// is dropped; refused, and remembered as the limit hit, past the budget.
    pub fn charge(self: &Arc<Self>, bytes: usize, what: &str) -> Result<Charge, OverBudget> {
        let held = self
            .host_held
            .try_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                held.checked_add(bytes).filter(|&n| n <= self.host_limit)
            })
            .map_err(|held| self.over(bytes, held, what))?;
        self.host_peak.fetch_max(held + bytes, Ordering::Relaxed);
        Ok(Charge {
            meter: Arc::clone(self),
            bytes,
        })
    }

    /// How much of the budget is not held now.
    pub fn available(&self) -> usize {
        self.host_limit
            .saturating_sub(self.host_held.load(Ordering::Relaxed))
    }

    /// Refuse `bytes` for `what` that were found, before they were made,
    /// not to fit in what [`Meter::available`] said: the same error, and
    /// the same limit recorded, as [`Meter::charge`] past the budget.
    pub fn refuse(&self, bytes: usize, what: &str) -> OverBudget {
        self.over(bytes, self.host_held.load(Ordering::Relaxed), what)
    }

    fn over(&self, needed: usize, held: usize, what: &str) -> OverBudget {
        self.hit(Limit::HostMemory, self.host_limit as u64);
        OverBudget {
            what: what.to_string(),
            needed,
            held,
            limit: self.host_limit,
        }
    }

    /// Count one epoch tick the guest's code ran through.
    pub fn tick(&self) {
        self.epoch_ticks.fetch_add(1, Ordering::Relaxed);
    }

    /// Count one more file or directory opened, or listing started.
    pub fn file_opened(&self) {
        self.files_opened.fetch_add(1, Ordering::Relaxed);
    }

    /// Record how many workspace files an instance of the call holds open
    /// now.
    pub fn files_open(&self, held: usize) {
        self.files_open_peak
            .fetch_max(u32::try_from(held).unwrap_or(u32::MAX), Ordering::Relaxed);
    }

    /// Count one more key-value operation (a batch counts each key); the
    /// count after it.
    pub fn kv_op(&self, ops: u32) -> u32 {
        self.kv_ops
            .fetch_add(ops, Ordering::Relaxed)
            .saturating_add(ops)
    }

    /// Count bytes of values read from key-value storage.
    pub fn kv_read(&self, bytes: usize) {
        self.kv_bytes_read
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Count bytes of values written to key-value storage.
    pub fn kv_written(&self, bytes: usize) {
        self.kv_bytes_written
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Record the size of the result the tool returned.
    pub fn output(&self, bytes: usize) {
        self.output_bytes.store(bytes, Ordering::Relaxed);
    }

    /// Record the most linear memory an instance of the call had.
    pub fn memory_peak(&self, bytes: usize) {
        self.memory_peak.fetch_max(bytes, Ordering::Relaxed);
    }

    /// Count one artifact of `bytes` saved.
    pub fn artifact_saved(&self, bytes: u64) {
        self.artifacts_saved.fetch_add(1, Ordering::Relaxed);
        self.artifact_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Count one more metric update; how many the call has made.
    pub fn metric_updated(&self) -> u32 {
        self.metric_updates
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1)
    }

    /// Count one more message sent to a session; how many the call has sent.
    pub fn message_sent(&self) -> u32 {
        self.messages_sent
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1)
    }

    /// Count one more reminder the call asked to schedule.
    pub fn reminder_scheduled(&self) {
        self.reminders_scheduled.fetch_add(1, Ordering::Relaxed);
    }

    /// Record what the call's OS sandbox (`bash`'s) used.
    pub fn sandbox_used(&self, used: SandboxUsage) {
        let _ = self.sandbox.set(used);
    }

    /// Record the limit that ended (or refused part of) the call; the first
    /// one is kept.
    pub fn hit(&self, name: Limit, value: u64) {
        let _ = self.limit_hit.set(LimitHit { name, value });
    }

    /// The receipt so far, with the parts only the pipeline knows.
    pub fn usage(&self, wall: Duration, attempts: u32, http: HttpTally) -> Usage {
        Usage {
            wall_us: u64::try_from(wall.as_micros()).unwrap_or(u64::MAX),
            attempts,
            peak_memory_bytes: self.memory_peak.load(Ordering::Relaxed) as u64,
            peak_host_bytes: self.host_peak.load(Ordering::Relaxed) as u64,
            kv_ops: self.kv_ops.load(Ordering::Relaxed),
            kv_bytes_read: self.kv_bytes_read.load(Ordering::Relaxed),
            kv_bytes_written: self.kv_bytes_written.load(Ordering::Relaxed),
            http_requests: http.requests,
            http_bytes_sent: http.bytes_sent,
            http_bytes_received: http.bytes_received,
            epoch_ticks: self.epoch_ticks.load(Ordering::Relaxed),
            output_bytes: self.output_bytes.load(Ordering::Relaxed) as u64,
            files_opened: self.files_opened.load(Ordering::Relaxed),
            peak_files_open: self.files_open_peak.load(Ordering::Relaxed),
            artifacts_saved: self.artifacts_saved.load(Ordering::Relaxed),
            artifact_bytes: self.artifact_bytes.load(Ordering::Relaxed),
            metric_updates: self.metric_updates.load(Ordering::Relaxed),
            messages_sent: self.messages_sent.load(Ordering::Relaxed),
            reminders_scheduled: self.reminders_scheduled.load(Ordering::Relaxed),
            sandbox: self.sandbox.get().copied(),
            limit: self.limit_hit.get().copied(),
        }
    }
}

/// A call's outbound HTTP, as its request budget counted it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpTally {
    /// Requests attempted, refused ones included.
    pub requests: u32,
    /// Request body bytes sent.
    pub bytes_sent: u64,
    /// Response body bytes received.
    pub bytes_received: u64,
}

/// Host memory taken from a call's budget, given back when dropped.
#[derive(Debug)]
pub struct Charge {
    meter: Arc<Meter>,
    bytes: usize,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.meter
            .host_held
            .fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// A limit that can end a call or refuse part of it, named as receipts,
/// traces and metrics name it (its config key, without a unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The call's deadline (`timeout_ms`).
    Timeout,
    /// Linear memory (`memory_mb`).
    Memory,
    /// Host memory held for the call (`host_memory_mb`).
    HostMemory,
    /// Resource handles held at once (`max_handles`).
    Handles,
    /// Workspace files every call together holds open (`max_open_files`).
    OpenFiles,
    /// The wasm stack.
    Stack,
    /// The result's size and shape (`max_output_bytes`).
    Output,
    /// CPU time of an OS sandbox's processes together (`bash.cpu_ms`).
    Cpu,
    /// Processes an OS sandbox may run at once (`bash.processes`).
    Processes,
    /// The largest file an OS sandbox's process may write.
    FileSize,
}

impl Limit {
    /// The limit's name: `timeout`, `memory`, `host_memory`, `handles`,
    /// `open_files`, `stack`, `output`, `cpu`, `processes` or `file_size`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Memory => "memory",
            Self::HostMemory => "host_memory",
            Self::Handles => "handles",
            Self::OpenFiles => "open_files",
            Self::Stack => "stack",
            Self::Output => "output",
            Self::Cpu => "cpu",
            Self::Processes => "processes",
            Self::FileSize => "file_size",
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A limit that ended a call or refused part of it, and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LimitHit {
    /// Which limit.
    pub name: Limit,
    /// Its configured value (milliseconds, bytes or a count).
    pub value: u64,
}

/// The receipt of one call: what it cost the host, for billing and alerts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Wall time of the whole call, in microseconds.
    pub wall_us: u64,
    /// How many times `execute` ran.
    pub attempts: u32,
    /// The most linear memory one instance of the call had, in bytes.
    pub peak_memory_bytes: u64,
    /// The most host memory charged to the call at once, in bytes.
    pub peak_host_bytes: u64,
    /// Key-value operations (a batch counts each key).
    pub kv_ops: u32,
    /// Bytes of values read from key-value storage.
    pub kv_bytes_read: u64,
    /// Bytes of values written to key-value storage.
    pub kv_bytes_written: u64,
    /// Outbound HTTP requests attempted, refused ones included.
    pub http_requests: u32,
    /// Request body bytes sent.
    pub http_bytes_sent: u64,
    /// Response body bytes received.
    pub http_bytes_received: u64,
    /// Epoch ticks (`EPOCH_TICK`, 5 ms) the guest's code ran through: its
    /// CPU time, to the tick.
    pub epoch_ticks: u64,
    /// Bytes of the result, as the tool returned it.
    pub output_bytes: u64,
    /// Files and directories opened in the workspace, listings included.
    pub files_opened: u32,
    /// The most of them one instance of the call held open at once.
    pub peak_files_open: u32,
    /// Artifacts the call saved.
    pub artifacts_saved: u32,
    /// Bytes of the artifacts it saved.
    pub artifact_bytes: u64,
    /// Custom metric updates it made, refused ones included.
    pub metric_updates: u32,
    /// Messages it sent to sessions, refused ones included.
    pub messages_sent: u32,
    /// Reminders it asked to schedule, refused ones included.
    pub reminders_scheduled: u32,
    /// What the call's OS sandbox used, for a tool that runs in one
    /// (`bash`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxUsage>,
    /// The limit that ended the call or refused part of it, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<LimitHit>,
}

/// What the processes of a call's OS sandbox used together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxUsage {
    /// Their CPU time, in microseconds, where the host's control groups
    /// count it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_us: Option<u64>,
    /// The most memory they held at once, in bytes, likewise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// The most of them running at once, likewise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_processes: Option<u64>,
    /// Bytes they wrote to standard output and error, kept or not.
    pub output_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meter(bytes: usize) -> Arc<Meter> {
        Meter::new(HostBudget { bytes, handles: 10 })
    }

    #[test]
    fn charges_are_refused_past_the_budget_and_given_back_when_dropped() {
        let meter = meter(100);
        let first = meter.charge(60, "a").unwrap();
        let err = meter.charge(50, "b").unwrap_err();
        assert_eq!((err.needed, err.held, err.limit), (50, 60, 100));
        assert!(
            err.to_string()
                .contains("host memory cap hit: b needs 50 bytes")
        );
        drop(first);
        let _second = meter.charge(100, "c").unwrap();
        let usage = meter.usage(Duration::ZERO, 1, HttpTally::default());
        assert_eq!(usage.peak_host_bytes, 100);
        assert_eq!(usage.limit.map(|l| l.name), Some(Limit::HostMemory));
    }

    #[test]
    fn an_overflowing_charge_is_refused() {
        let meter = meter(usize::MAX);
        let _held = meter.charge(10, "a").unwrap();
        assert!(meter.charge(usize::MAX, "b").is_err());
    }

    #[test]
    fn the_per_handle_share_times_the_handles_fits_the_budget() {
        let budget = HostBudget {
            bytes: 32 << 20,
            handles: 1024,
        };
        assert_eq!(budget.per_handle_bytes(), 32 << 10);
        assert!(budget.per_handle_bytes() * budget.handles as usize <= budget.bytes);
        assert_eq!(budget.hostcall_bytes(1 << 20), 32 << 20);
        assert_eq!(budget.hostcall_bytes(64 << 20), 128 << 20);
    }
}
