//! Per-call Store data, and every wasmtime view-trait impl in one place.
//!
//! A wasmtime upgrade that moves these traits touches only this file.

use std::sync::Arc;

use wasmtime::ResourceLimiter;
use wasmtime::component::{Linker, ResourceTable};
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::{WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::caps::Caps;
use crate::caps::kv::KvView;
use crate::caps::log::TraceLog;
use crate::caps::workspace::FilesView;
use crate::deadline::Deadline;
use crate::usage::{CallBounds, Meter};

/// Everything one call's Store holds: its capabilities, one field each in
/// [`Caps`], and what wasmtime and the call's bounds need beside them.
pub struct CallState {
    pub(crate) caps: Caps,
    pub(crate) http_ctx: WasiHttpCtx,
    pub(crate) trace: TraceLog,
    pub(crate) table: ResourceTable,
    pub(crate) limits: CallLimits,
    pub(crate) meter: Arc<Meter>,
    pub(crate) deadline: Arc<Deadline>,
    pub(crate) timed_out: bool,
}

impl CallState {
    /// State for one instance of a tool, with the given capabilities and
    /// bounds.
    pub(crate) fn new(
        caps: Caps,
        trace: TraceLog,
        bounds: CallBounds,
        deadline: Arc<Deadline>,
    ) -> Self {
        let CallBounds {
            memory_bytes,
            host: budget,
            meter,
            output_bytes: _,
        } = bounds;
        let mut http_ctx = WasiHttpCtx::new();
        http_ctx.set_field_size_limit(budget.per_handle_bytes());
        let mut table = ResourceTable::new();
        table.set_max_capacity(budget.handles as usize);
        Self {
            caps,
            http_ctx,
            trace,
            table,
            limits: CallLimits::new(memory_bytes),
            meter,
            deadline,
            timed_out: false,
        }
    }
}

/// The `wasi:filesystem/types` instance wasmtime-wasi links, whose
/// listing and opening the workspace capability serves itself.
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// The `wasi:http/types` instance wasmtime-wasi-http links, whose request
/// method and authority the HTTP capability bounds.
const HTTP_TYPES: &str = "wasi:http/types@0.2.12";

/// Link every interface a tool may import. Ungranted ones refuse inside.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    crate::caps::workspace::add_to_linker(linker, FILESYSTEM_TYPES, |s| FilesView {
        files: WasiFilesystemCtxView {
            ctx: s.caps.wasi.filesystem(),
            table: &mut s.table,
        },
        open: &mut s.caps.files,
        meter: &s.meter,
        trace: &s.trace,
    })?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)?;
    crate::caps::http::request_parts::add_to_linker(linker, HTTP_TYPES)?;
    crate::caps::log::add_to_linker(linker, |s| &mut s.trace)?;
    crate::caps::progress::add_to_linker(linker, |s| &mut s.caps.progress)?;
    crate::caps::resource_updates::add_to_linker(linker, |s| &mut s.caps.resource_updates)?;
    crate::caps::ask::add_to_linker(linker, |s| &mut s.caps.ask)?;
    crate::caps::context::add_to_linker(linker, |s| &mut s.caps.mounts)?;
    crate::caps::artifacts::add_to_linker(linker, |s| &mut s.caps.artifacts)?;
    crate::caps::metrics::add_to_linker(linker, |s| &mut s.caps.metrics)?;
    crate::caps::sessions::add_to_linker(linker, |s| &mut s.caps.sessions)?;
    crate::caps::reminders::add_to_linker(linker, |s| &mut s.caps.reminders)?;
    crate::caps::kv::add_to_linker(linker, |s| KvView {
        ctx: &mut s.caps.kv,
        table: &mut s.table,
    })?;
    Ok(())
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.caps.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.caps.http,
        }
    }
}

/// Core instances one component instance may have (the instance pool's
/// per-component maximum, and every Store's limit on either engine).
pub const MAX_CORE_INSTANCES_PER_COMPONENT: u32 = 64;
/// Linear memories one component instance may have.
pub const MAX_MEMORIES_PER_COMPONENT: u32 = 8;
/// Tables one component instance may have.
pub const MAX_TABLES_PER_COMPONENT: u32 = 16;

/// The most elements one table may have: the instance pool's slot size
/// (wasmtime's default) and every Store's limit on either engine.
pub const MAX_TABLE_ELEMENTS: usize = 20_000;

/// Memory and table caps for one Store, remembering whether the cap was hit.
/// The memory cap is for all of an instance's linear memories together; the
/// counts of core instances, memories and tables are the instance pool's
/// per-component maxima, so baseline (on-demand) code is held to them too.
pub(crate) struct CallLimits {
    memory_bytes: usize,
    memory_in_use: usize,
    pub(crate) memory_hit: bool,
}

impl CallLimits {
    fn new(memory_bytes: usize) -> Self {
        Self {
            memory_bytes,
            memory_in_use: 0,
            memory_hit: false,
        }
    }

    /// The memory cap in bytes.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.memory_bytes
    }

    /// The linear memory the instance has now, all memories together.
    pub(crate) fn memory_in_use(&self) -> usize {
        self.memory_in_use
    }
}

impl ResourceLimiter for CallLimits {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let in_use = (self.memory_in_use - current.min(self.memory_in_use)).saturating_add(desired);
        if in_use > self.memory_bytes {
            self.memory_hit = true;
            wasmtime::bail!(
                "memory cap of {} MiB reached",
                self.memory_bytes / (1024 * 1024)
            );
        }
        self.memory_in_use = in_use;
        Ok(true)
    }

    fn instances(&self) -> usize {
        MAX_CORE_INSTANCES_PER_COMPONENT as usize
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES_PER_COMPONENT as usize
    }

    fn tables(&self) -> usize {
        MAX_TABLES_PER_COMPONENT as usize
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_cap_covers_every_memory_together() {
        let mut limits = CallLimits::new(10);
        assert!(limits.memory_growing(0, 6, None).unwrap());
        assert!(limits.memory_growing(6, 8, None).unwrap());
        assert!(limits.memory_growing(0, 3, None).is_err(), "8 + 3 > 10");
        assert!(limits.memory_hit);
    }

    #[test]
    fn store_counts_match_the_pools_per_component_maxima() {
        let limits = CallLimits::new(10);
        assert_eq!(
            limits.instances(),
            MAX_CORE_INSTANCES_PER_COMPONENT as usize
        );
        assert_eq!(limits.memories(), MAX_MEMORIES_PER_COMPONENT as usize);
        assert_eq!(limits.tables(), MAX_TABLES_PER_COMPONENT as usize);
    }
}
