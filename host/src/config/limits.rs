//! `[limits]`: host-wide limits, every surface together.

use std::time::Duration;

use anyhow::Context as _;
use serde::Deserialize;

use super::{MAX_TIMEOUT_MS, check_range};
use crate::admission::CallGate;
use crate::usage::{DEFAULT_HOST_MEMORY_MB, DEFAULT_MAX_HANDLES, HostBudget};

/// How many calls may run tool code at once by default.
pub const DEFAULT_MAX_CONCURRENT_CALLS: u32 = 64;
/// How many calls may wait for a slot by default; more are refused at once.
pub const DEFAULT_MAX_QUEUED_CALLS: u32 = 256;
/// The compile cache's size cap, in MiB, when none is configured: room for
/// the examples (a Python tool compiles to ~36 MB) many times over.
pub const DEFAULT_COMPILE_CACHE_MB: u64 = 2048;
/// The largest compile cache cap.
pub const MAX_COMPILE_CACHE_MB: u64 = 1 << 20;
/// How long a call waits for a slot by default before it is refused.
pub const DEFAULT_QUEUE_TIMEOUT_MS: u64 = 10_000;
/// The most calls the host may be configured to run at once.
pub const MAX_CONCURRENT_CALLS_CAP: u32 = 4096;
/// The largest `host_memory_mb`.
pub const MAX_HOST_MEMORY_MB: u64 = 4096;
/// The smallest `max_handles`: a toolchain's start-up opens a few dozen.
pub const MIN_MAX_HANDLES: u32 = 64;
/// The largest `max_handles`.
pub const MAX_MAX_HANDLES: u32 = 1_000_000;
/// How many workspace files every call together may hold open by default.
pub const DEFAULT_MAX_OPEN_FILES: u32 = 4096;
/// The fewest `max_open_files`: a toolchain's start-up opens a few.
pub const MIN_MAX_OPEN_FILES: u32 = 16;
/// How long a call waits for an answer to a question by default (10 min).
pub const DEFAULT_ASK_TIMEOUT_MS: u64 = 600_000;
/// The bytes one session's artifacts may take by default, in MiB.
pub const DEFAULT_SESSION_ARTIFACTS_MB: u64 = 256;
/// The most `session_artifacts_mb` may be (1 TiB).
const MAX_SESSION_ARTIFACTS_MB: u64 = 1 << 20;
/// The longest `ask_timeout_ms` (a day).
pub const MAX_ASK_TIMEOUT_MS: u64 = 86_400_000;
/// The smallest per-handle share of the host memory budget.
pub const MIN_BYTES_PER_HANDLE: usize = 4096;

/// `[limits]`: how many calls run at once and how many may wait, on every
/// surface together (HTTP, MCP, CLI, library).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostLimits {
    /// Calls running tool code at once; the instance pool is sized for them.
    pub max_concurrent_calls: Option<u32>,
    /// Calls allowed to wait for a slot; one more is refused as overloaded.
    pub max_queued_calls: Option<u32>,
    /// How long a call waits for a slot before it is refused as overloaded.
    pub queue_timeout_ms: Option<u64>,
    /// The compile cache's size on disk, in MiB: past it, the least
    /// recently used compilations are removed.
    pub compile_cache_mb: Option<u64>,
    /// Host memory one call may make the host hold for it, in MiB.
    pub host_memory_mb: Option<u64>,
    /// Resource handles one call may hold at once.
    pub max_handles: Option<u32>,
    /// Workspace files every call together may hold open; held to half the
    /// process's open-file limit.
    pub max_open_files: Option<u32>,
    /// Calls that may wait for an answer from a person or a model at once
    /// (`toolhost:tool/ask`); fewer than `max_concurrent_calls`, so those
    /// who take their time cannot hold every slot.
    pub max_asking_calls: Option<u32>,
    /// How long one question waits for its answer, in milliseconds.
    pub ask_timeout_ms: Option<u64>,
    /// The bytes one session's artifacts may take together, in MiB.
    pub session_artifacts_mb: Option<u64>,
}

impl HostLimits {
    /// Calls running tool code at once.
    pub fn concurrent_calls(&self) -> u32 {
        self.max_concurrent_calls
            .unwrap_or(DEFAULT_MAX_CONCURRENT_CALLS)
    }

    /// Calls allowed to wait for a slot.
    pub fn queued_calls(&self) -> u32 {
        self.max_queued_calls.unwrap_or(DEFAULT_MAX_QUEUED_CALLS)
    }

    /// How long a call waits for a slot.
    pub fn queue_timeout(&self) -> Duration {
        Duration::from_millis(self.queue_timeout_ms.unwrap_or(DEFAULT_QUEUE_TIMEOUT_MS))
    }

    /// The admission gate these limits describe.
    pub fn call_gate(&self) -> CallGate {
        CallGate::new(
            self.concurrent_calls(),
            self.queued_calls(),
            self.queue_timeout(),
        )
    }

    /// The compile cache's size cap, in bytes.
    pub fn compile_cache_bytes(&self) -> u64 {
        self.compile_cache_mb.unwrap_or(DEFAULT_COMPILE_CACHE_MB) << 20
    }

    /// What one call may make the host hold for it.
    pub fn host_budget(&self) -> HostBudget {
        HostBudget {
            bytes: usize::try_from(self.host_memory_mb.unwrap_or(DEFAULT_HOST_MEMORY_MB) << 20)
                .unwrap_or(usize::MAX),
            handles: self.max_handles.unwrap_or(DEFAULT_MAX_HANDLES),
        }
    }

    /// Workspace files every call together may hold open, as configured.
    pub fn open_files(&self) -> u32 {
        self.max_open_files.unwrap_or(DEFAULT_MAX_OPEN_FILES)
    }

    /// Calls that may wait for an answer at once: half the running calls
    /// unless set.
    pub fn asking_calls(&self) -> u32 {
        self.max_asking_calls.unwrap_or(self.concurrent_calls() / 2)
    }

    /// How long one question waits for its answer.
    pub fn ask_timeout(&self) -> Duration {
        Duration::from_millis(self.ask_timeout_ms.unwrap_or(DEFAULT_ASK_TIMEOUT_MS))
    }

    /// The bytes one session's artifacts may take together.
    pub fn session_artifact_bytes(&self) -> u64 {
        self.session_artifacts_mb
            .unwrap_or(DEFAULT_SESSION_ARTIFACTS_MB)
            << 20
    }

    pub(super) fn validate(&self) -> anyhow::Result<()> {
        check_range(
            "session_artifacts_mb",
            self.session_artifacts_mb,
            1..=MAX_SESSION_ARTIFACTS_MB,
        )?;
        check_range(
            "max_open_files",
            self.max_open_files,
            MIN_MAX_OPEN_FILES..=MAX_MAX_HANDLES,
        )?;
        check_range(
            "host_memory_mb",
            self.host_memory_mb,
            1..=MAX_HOST_MEMORY_MB,
        )?;
        check_range(
            "max_handles",
            self.max_handles,
            MIN_MAX_HANDLES..=MAX_MAX_HANDLES,
        )?;
        let share = self.host_budget().per_handle_bytes();
        anyhow::ensure!(
            share >= MIN_BYTES_PER_HANDLE,
            "`host_memory_mb` / `max_handles` leaves {share} bytes per handle; at least \
             {MIN_BYTES_PER_HANDLE} are needed for a header map or a body buffer: raise \
             `host_memory_mb` or lower `max_handles`"
        );
        if let Some(mb) = self.compile_cache_mb {
            anyhow::ensure!(
                (1..=MAX_COMPILE_CACHE_MB).contains(&mb),
                "`compile_cache_mb` = {mb} is out of range: expected 1 to {MAX_COMPILE_CACHE_MB} \
                 (1 TiB)"
            );
        }
        check_range(
            "max_concurrent_calls",
            self.max_concurrent_calls,
            1..=MAX_CONCURRENT_CALLS_CAP,
        )?;
        check_range("max_queued_calls", self.max_queued_calls, 0..=65_536)?;
        check_range(
            "max_asking_calls",
            self.max_asking_calls,
            0..=self.concurrent_calls().saturating_sub(1),
        )
        .context("calls waiting for an answer hold their slot: leave at least one for others")?;
        check_range(
            "ask_timeout_ms",
            self.ask_timeout_ms,
            1..=MAX_ASK_TIMEOUT_MS,
        )?;
        check_range(
            "queue_timeout_ms",
            self.queue_timeout_ms,
            0..=MAX_TIMEOUT_MS,
        )?;
        Ok(())
    }
}
