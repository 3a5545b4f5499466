//! The wasmtime engines (Cranelift, and Winch for code wanted at once):
//! configuration, compiling and loading components, epoch ticker.
//!
//! Each component is compiled once with Cranelift and kept in the
//! `crate::sandbox::compile_cache` under the state directory. Every call gets a
//! fresh Store from the pooling allocator; an epoch ticker gives every call
//! a deadline and lets looping guests yield to the async runtime.
//!
//! A reload, or a server's start, may compile a component the cache lacks
//! with Winch first (the baseline tier: several times faster to compile,
//! slower to run) so the tool serves calls at once; `crate::sandbox::tiering` then
//! swaps in the Cranelift compilation when it is done.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use sha2::{Digest, Sha256};
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, Strategy,
    UpdateDeadline,
};

use crate::config::state::SharedCompileCache;
use crate::files::FileStamp;
pub use crate::sandbox::code::CodeTier;
use crate::sandbox::code::{Compiled, Source};
use crate::sandbox::compile_cache::CompileCache;
use crate::sandbox::state::{
    self, CallState, MAX_CORE_INSTANCES_PER_COMPONENT, MAX_MEMORIES_PER_COMPONENT,
    MAX_TABLE_ELEMENTS, MAX_TABLES_PER_COMPONENT,
};

/// How often the epoch advances: the granularity of deadlines and of yields.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);
/// How much of a freed instance's memory is zeroed in place rather than
/// returned to the kernel. Zeroing a small prefix is cheaper than the
/// `madvise` + TLB shootdown + page faults the next call would pay, and
/// covers a guest built with a small shadow stack (the SDK's 128 KiB, see
/// `.cargo/config.toml`). Measured in bench/RESULTS.md.
pub const MEMORY_KEEP_RESIDENT_BYTES: usize = 256 * 1024;
/// The same with Linux's `PAGEMAP_SCAN` (6.7+): only the pages a call wrote
/// are copied back from the tool's initial image, so far more can stay
/// mapped. A fresh instance of a JS tool (a 2–15 MB heap snapshot) then
/// takes few copy-on-write faults when it lands in a slot the same tool used
/// before; the price is up to this much resident memory per slot.
pub const MEMORY_KEEP_RESIDENT_WITH_PAGEMAP: usize = 16 << 20;
/// The wasm stack cap: deeper recursion traps with a stack overflow.
pub const MAX_WASM_STACK_BYTES: usize = 1024 * 1024;

/// How to size the engine.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// The largest memory cap any tool has, in bytes.
    pub max_memory_bytes: usize,
    /// How many instances may be alive at once (calls plus loads).
    pub max_instances: u32,
    /// Where compiled components are cached.
    pub cache_dir: PathBuf,
    /// The compile cache's size cap: past it, the least recently used
    /// compilations are removed (`[limits] compile_cache_mb`).
    pub cache_max_bytes: u64,
    /// A folder other servers share compilations in, and the key they are
    /// authenticated with (`[state] shared_compile_cache`).
    pub shared_cache: Option<SharedCompileCache>,
}

/// Which compiler a load may use for a component it has no cached
/// compilation of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tiering {
    /// Cranelift, before the load returns (start-up, one-shot commands).
    Optimized,
    /// Winch, then Cranelift in the background (reloads, a server's start).
    BaselineFirst,
}

/// An engine and the linker of every capability for its components.
struct Tier {
    engine: Engine,
    linker: Linker<CallState>,
}

impl Tier {
    fn new(engine: Engine) -> anyhow::Result<Self> {
        let mut linker = Linker::new(&engine);
        state::add_to_linker(&mut linker)?;
        Ok(Self { engine, linker })
    }
}

/// The engine, the linker with every capability, and the compile cache.
pub struct ToolEngine {
    optimized: Tier,
    /// Winch, for baseline-first loads: made at the first one (a one-shot
    /// command never pays for it); `None` in it where Winch cannot compile
    /// for this CPU.
    baseline: Arc<OnceLock<Option<Tier>>>,
    admission: Arc<tokio::sync::Semaphore>,
    max_instances: u32,
    max_memory_bytes: usize,
    cache: Arc<Cached>,
    /// How many baseline components wait for their optimized compile.
    optimizing: tokio::sync::watch::Sender<usize>,
    _ticker: EpochTicker,
}

impl ToolEngine {
    /// Build the engine and start its epoch ticker.
    pub fn new(options: &EngineOptions) -> anyhow::Result<Self> {
        let engine = Engine::new(&engine_config(options)).map_err(|e| {
            anyhow::anyhow!(
                "cannot reserve the instance pool for {} instances of up to {} MiB each: \
                 lower `[limits] max_concurrent_calls` or the largest `memory_mb`: {e:#}",
                options.max_instances.max(1),
                options.max_memory_bytes >> 20
            )
        })?;
        let optimized = Tier::new(engine.clone())?;
        let baseline = Arc::new(OnceLock::new());
        let cache = CompileCache::open(
            &options.cache_dir,
            &engine_key(&engine),
            options.cache_max_bytes,
            options.shared_cache.as_ref(),
        )?;
        let max_instances = options.max_instances.max(1);
        let admission = Arc::new(tokio::sync::Semaphore::new(max_instances as usize));
        let idle = IdleRelease::new(admission.clone(), max_instances);
        let ticker = EpochTicker::start(engine.clone(), baseline.clone(), idle)
            .context("cannot start the epoch ticker thread that enforces deadlines")?;
        Ok(Self {
            optimized,
            baseline,
            admission,
            max_instances,
            max_memory_bytes: options.max_memory_bytes,
            cache: Arc::new(Cached {
                engine: engine.clone(),
                cache,
            }),
            optimizing: tokio::sync::watch::Sender::new(0),
            _ticker: ticker,
        })
    }

    /// The largest linear memory an instance may have: the pool is sized
    /// for it when the engine starts.
    pub fn max_memory_bytes(&self) -> usize {
        self.max_memory_bytes
    }

    /// The wasmtime engine of optimized (Cranelift) code.
    pub fn engine(&self) -> &Engine {
        &self.optimized.engine
    }

    /// Compile `bytes` (or load the cached compilation) on the blocking
    /// pool, so a load or reload never holds up the workers serving calls.
    pub async fn compile(&self, bytes: Vec<u8>) -> anyhow::Result<Compiled> {
        check_is_component(&bytes)?;
        let cache = self.cache.clone();
        tokio::task::spawn_blocking(move || {
            let sha256 = hex::encode(Sha256::digest(&bytes));
            cache.load_or_compile(&bytes, sha256)
        })
        .await
        .context("the compile task failed")?
    }

    /// Compile a component loaded as baseline code with Cranelift (or load
    /// that compilation from the cache, and cache it), on the blocking pool.
    pub(crate) async fn optimize(&self, source: Source) -> anyhow::Result<Component> {
        let cache = self.cache.clone();
        tokio::task::spawn_blocking(move || {
            let sha256 = hex::encode(Sha256::digest(&source.bytes));
            let compiled = cache.load_or_compile(&source.bytes, sha256)?;
            if let Some((path, stamp)) = source.file {
                cache.cache.record(&path, stamp, &compiled.sha256);
            }
            Ok(compiled.component)
        })
        .await
        .context("the compile task failed")?
    }

    /// The baseline tier, made on first use.
    fn baseline(&self) -> Option<&Tier> {
        self.baseline
            .get_or_init(|| {
                let tier = Engine::new(&baseline_config())
                    .map_err(|e| anyhow::anyhow!("{e:#}"))
                    .and_then(Tier::new);
                tier.inspect_err(|e| {
                    tracing::info!(
                        "no baseline compiler, every load compiles with Cranelift: {e:#}"
                    )
                })
                .ok()
            })
            .as_ref()
    }

    /// Count a baseline component as waiting for its optimized code until
    /// the returned guard is dropped.
    pub(crate) fn optimizing(&self) -> OptimizingGuard {
        self.optimizing.send_modify(|n| *n += 1);
        OptimizingGuard(self.optimizing.clone())
    }

    /// Wait until no tool runs on baseline code that is still being
    /// optimized: every tool then runs its Cranelift compilation.
    pub async fn wait_optimized(&self) {
        let mut pending = self.optimizing.subscribe();
        let _ = pending.wait_for(|n| *n == 0).await;
    }

    /// Load the component at `path`. When the file's stamp is the one the
    /// last load recorded and that compilation is cached, the file is not
    /// read again (an 18 MB Python tool costs ~8 ms to read and hash);
    /// otherwise it is read, hashed and compiled or loaded by content.
    /// `stamp` is the file's stamp as the caller took it before the load.
    /// With [`Tiering::BaselineFirst`], a component with no cached
    /// compilation is compiled with Winch, and the result says what its
    /// optimized compile needs (`baseline_of`).
    pub(crate) async fn load_file(
        &self,
        path: &Path,
        stamp: Option<FileStamp>,
        tiering: Tiering,
        gate: Option<ContentGate>,
    ) -> anyhow::Result<Compiled> {
        let path = path.to_path_buf();
        let baseline = match tiering {
            Tiering::BaselineFirst => self.baseline().map(|t| t.engine.clone()),
            Tiering::Optimized => None,
        };
        let cache = self.cache.clone();
        tokio::task::spawn_blocking(move || {
            let pass = |sha256: &str| match &gate {
                Some(gate) => gate(sha256).map_err(anyhow::Error::msg),
                None => Ok(()),
            };
            // A compilation the cache holds is the host's own work, loaded
            // without running anything; the lock is checked before any of
            // the tool's code is compiled or instantiated.
            if let Some(compiled) = stamp.and_then(|s| cache.load_file(&path, s)) {
                pass(&compiled.sha256)?;
                return Ok(compiled);
            }
            let bytes = std::fs::read(&path).context("cannot read")?;
            check_is_component(&bytes)?;
            let sha256 = hex::encode(Sha256::digest(&bytes));
            pass(&sha256)?;
            if let Some(baseline) = baseline.filter(|_| !cache.cache.holds(&sha256)) {
                match Component::new(&baseline, &bytes) {
                    Ok(component) if fits_the_pool(&component) => {
                        return Ok(Compiled {
                            component,
                            sha256,
                            baseline_of: Some(Source {
                                bytes,
                                file: stamp.map(|stamp| (path, stamp)),
                            }),
                        });
                    }
                    Ok(_) => tracing::info!(
                        path = %path.display(),
                        "wider than the instance pool, so Cranelift compiles it and the pool \
                         says why it cannot run"
                    ),
                    Err(e) => tracing::info!(
                        path = %path.display(),
                        "Winch cannot compile it, so Cranelift does: {e:#}"
                    ),
                }
            }
            let compiled = cache.load_or_compile(&bytes, sha256)?;
            if let Some(stamp) = stamp {
                cache.cache.record(&path, stamp, &compiled.sha256);
            }
            Ok(compiled)
        })
        .await
        .context("the compile task failed")?
    }

    /// The tool names the file at `path` gave when a load last recorded
    /// them, if it has not changed since (by its stamp).
    pub(crate) fn recorded_names(&self, path: &Path, stamp: FileStamp) -> Option<Vec<String>> {
        self.cache.cache.recorded_names(path, stamp)
    }

    /// Record the tool names the file at `path`, as of `stamp`, gave.
    pub(crate) fn record_names(&self, path: &Path, stamp: FileStamp, names: &[String]) {
        self.cache.cache.record_names(path, stamp, names);
    }

    /// Resolve a component's imports against every capability.
    pub(crate) fn instantiate_pre(
        &self,
        component: &Component,
    ) -> anyhow::Result<InstancePre<CallState>> {
        let tier = match self.baseline.get() {
            Some(Some(baseline)) if Engine::same(component.engine(), &baseline.engine) => baseline,
            _ => &self.optimized,
        };
        tier.linker
            .instantiate_pre(component)
            .map_err(|e| anyhow::anyhow!("imports something toolhost does not provide: {e:#}"))
    }

    /// A place for one live instance, waiting until `deadline` for one to
    /// free up: the pooling allocator never sees more than it was sized for.
    pub(crate) async fn admit(
        &self,
        deadline: Instant,
    ) -> anyhow::Result<tokio::sync::OwnedSemaphorePermit> {
        let acquire = self.admission.clone().acquire_owned();
        match tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), acquire).await {
            Ok(Ok(permit)) => Ok(permit),
            Ok(Err(_)) => anyhow::bail!("the engine is shutting down"),
            Err(_) => anyhow::bail!(
                "the host is at its limit of {} live instances and none freed up before the deadline",
                self.max_instances
            ),
        }
    }

    /// A fresh Store in `engine` (that of the code to instantiate) for one
    /// instance: memory cap, deadline, epoch yields.
    pub(crate) fn store(&self, engine: &Engine, state: CallState) -> Store<CallState> {
        let mut store = Store::new(engine, state);
        store.limiter(|s| &mut s.limits);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut ctx| {
            let state = ctx.data_mut();
            state.meter.tick();
            if state.deadline.passed() {
                state.timed_out = true;
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        store
    }
}

/// Held while a baseline component waits for its optimized code.
pub(crate) struct OptimizingGuard(tokio::sync::watch::Sender<usize>);

impl Drop for OptimizingGuard {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl ToolEngine {
    /// Mark the cached compilations of `sha256s` as in use, so hosts
    /// sharing the compile cache do not evict them (see
    /// [`crate::sandbox::compile_cache`]); on the blocking pool.
    pub(crate) async fn keep_cached(&self, sha256s: std::collections::BTreeSet<String>) {
        let cache = self.cache.clone();
        let _ = tokio::task::spawn_blocking(move || cache.cache.keep(&sha256s)).await;
    }
}

/// The compile cache's key for `engine`'s compilations: its compatibility
/// hash, so another wasmtime or other settings never load them.
fn engine_key(engine: &Engine) -> String {
    use std::hash::{Hash as _, Hasher as _};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// The compile cache with the engine whose compilations it holds: what
/// turns its stored bytes into components and components into its bytes.
struct Cached {
    engine: Engine,
    cache: CompileCache,
}

impl Cached {
    /// The compilation of `bytes` (content `sha256`) from the cache, or
    /// compiled with Cranelift and stored.
    fn load_or_compile(&self, bytes: &[u8], sha256: String) -> anyhow::Result<Compiled> {
        if let Some(component) = self.load(&sha256) {
            return Ok(Compiled::optimized(component, sha256));
        }
        let component =
            Component::new(&self.engine, bytes).map_err(|e| anyhow::anyhow!("{e:#}"))?;
        match component.serialize() {
            Ok(serialized) => self.cache.store(&sha256, &serialized),
            Err(e) => tracing::warn!("cannot serialize component: {e}"),
        }
        Ok(Compiled::optimized(component, sha256))
    }

    /// The cached compilation of the tool file at `file`, if `stamp` is the
    /// stamp the cache recorded for it: the file is not read.
    fn load_file(&self, file: &Path, stamp: FileStamp) -> Option<Compiled> {
        let sha256 = self.cache.recorded(file, stamp)?;
        let component = self.load(&sha256)?;
        Some(Compiled::optimized(component, sha256))
    }

    /// Deserialize the cached compilation of `sha256`; an entry that cannot
    /// be loaded (cut short, from another wasmtime) is discarded.
    fn load(&self, sha256: &str) -> Option<Component> {
        let entry = self.cache.entry(sha256)?;
        // SAFETY: the cache hands out only what `CompileCache::store` wrote
        // from `Component::serialize`, named by the content hash and this
        // engine's compatibility hash: a file in its own folder owned by
        // this user with no one else able to write it, or, from a shared
        // folder, bytes read once and authenticated with the cluster key.
        let loaded = match &entry.verified {
            Some(bytes) => unsafe { Component::deserialize(&self.engine, bytes) },
            None => unsafe { Component::deserialize_file(&self.engine, &entry.path) },
        };
        match loaded {
            Ok(component) => {
                self.cache.used(&entry.path);
                Some(component)
            }
            Err(e) => {
                self.cache.discard(&entry.path, &e);
                None
            }
        }
    }
}

/// Decides from a file's SHA-256 whether it may be compiled and run (the
/// lock's check); why not.
pub(crate) type ContentGate = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// What pins each file's content before it is compiled or run
/// (`tools.lock`): the gate for a file of a given slug.
pub(crate) trait Pins: Sync {
    /// The gate a file named `slug` must pass.
    fn gate(&self, slug: &str) -> ContentGate;
}

fn engine_config(options: &EngineOptions) -> Config {
    let mut pool = PoolingAllocationConfig::default();
    let instances = options.max_instances.max(1);
    // Totals fit `max_instances` instances of the widest component allowed,
    // so one tool cannot take another's core instances, memories or tables.
    pool.total_component_instances(instances)
        .total_core_instances(instances.saturating_mul(MAX_CORE_INSTANCES_PER_COMPONENT))
        .total_memories(instances.saturating_mul(MAX_MEMORIES_PER_COMPONENT))
        .total_tables(instances.saturating_mul(MAX_TABLES_PER_COMPONENT))
        .total_stacks(instances)
        .max_core_instances_per_component(MAX_CORE_INSTANCES_PER_COMPONENT)
        .max_memories_per_component(MAX_MEMORIES_PER_COMPONENT)
        .max_tables_per_component(MAX_TABLES_PER_COMPONENT)
        // Per module, only the component's maxima bound them: as in the
        // Store's limiter, which baseline code runs under.
        .max_memories_per_module(MAX_MEMORIES_PER_COMPONENT)
        .max_tables_per_module(MAX_TABLES_PER_COMPONENT)
        .table_elements(MAX_TABLE_ELEMENTS)
        .max_memory_size(options.max_memory_bytes)
        .table_keep_resident(64 << 10);
    // wasmtime 50's scan resets every written page, present or swapped out,
    // and resumes when its region buffer fills (48's stopped at 32 regions
    // and skipped swapped-out pages, so toolhost turned it off under swap).
    if PoolingAllocationConfig::is_pagemap_scan_available() {
        pool.pagemap_scan(Enabled::Yes)
            .linear_memory_keep_resident(MEMORY_KEEP_RESIDENT_WITH_PAGEMAP);
    } else {
        pool.linear_memory_keep_resident(MEMORY_KEEP_RESIDENT_BYTES);
    }
    let mut config = Config::new();
    config
        .epoch_interruption(true)
        .max_wasm_stack(MAX_WASM_STACK_BYTES)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    config
}

/// The baseline engine: Winch, instances allocated on demand (baseline code
/// serves calls only until its optimized compile replaces it, so it gets no
/// pool of its own). The memory cap is the Store's limiter, as for pooled
/// instances.
fn baseline_config() -> Config {
    let mut config = Config::new();
    config
        .strategy(Strategy::Winch)
        .epoch_interruption(true)
        .max_wasm_stack(MAX_WASM_STACK_BYTES);
    config
}

/// Whether baseline code of `component` may stand in for its optimized
/// code: its memories, tables and table sizes fit the instance pool's
/// per-component maxima (the pool checks them only when Cranelift's code
/// is made). One that does not is compiled with Cranelift at once, so the
/// pool refuses it at load with why instead of it running on baseline code
/// that could never be swapped out. Core instances are not counted here:
/// the Store's limiter refuses too many when baseline code instantiates.
fn fits_the_pool(component: &Component) -> bool {
    component.resources_required().is_some_and(|needs| {
        needs.num_memories <= MAX_MEMORIES_PER_COMPONENT
            && needs.num_tables <= MAX_TABLES_PER_COMPONENT
            && needs
                .max_initial_table_size
                .is_none_or(|elements| elements <= MAX_TABLE_ELEMENTS as u64)
    })
}

/// Refuse files that are not components, with a message saying what they are.
fn check_is_component(bytes: &[u8]) -> anyhow::Result<()> {
    const MAGIC: &[u8] = b"\0asm";
    if bytes.len() < 8 || &bytes[..4] != MAGIC {
        anyhow::bail!("is not a WebAssembly file (no `\\0asm` header)");
    }
    // Bytes 6..8 are the layer: 0 for a core module, 1 for a component.
    if bytes[6..8] == [0, 0] {
        anyhow::bail!(
            "is a core WebAssembly module, not a component: build it for `wasm32-wasip2` \
             or wrap it with `wasm-tools component new`"
        );
    }
    Ok(())
}

/// How long the engine has no live instance before the memory that freed
/// pool slots keep resident (up to [`MEMORY_KEEP_RESIDENT_WITH_PAGEMAP`]
/// each) is given back to the kernel. The next call of each tool then pays
/// its page faults once (~1 ms for a Python tool).
pub const IDLE_RELEASE_AFTER: Duration = Duration::from_secs(1);

/// Gives the pool's warm memory back once the engine has been idle for
/// [`IDLE_RELEASE_AFTER`], at most once per idle period.
struct IdleRelease {
    admission: Arc<tokio::sync::Semaphore>,
    max_instances: u32,
    idle_since: Option<Instant>,
    released: bool,
}

impl IdleRelease {
    fn new(admission: Arc<tokio::sync::Semaphore>, max_instances: u32) -> Self {
        Self {
            admission,
            max_instances,
            idle_since: None,
            released: false,
        }
    }

    /// Called on every tick. Every admission permit is held while the pool
    /// releases its warm slots, so no instantiation can find them taken.
    fn tick(&mut self, engine: &Engine) {
        if self.admission.available_permits() < self.max_instances as usize {
            self.idle_since = None;
            self.released = false;
            return;
        }
        let since = *self.idle_since.get_or_insert_with(Instant::now);
        if self.released || since.elapsed() < IDLE_RELEASE_AFTER {
            return;
        }
        if let Ok(_all) = self.admission.try_acquire_many(self.max_instances) {
            let bytes = engine.release_idle_pool_memory();
            tracing::debug!(bytes, "idle: released the pool's warm memory");
            self.released = true;
        }
    }
}

/// Advances the engines' epochs every [`EPOCH_TICK`] until dropped, and
/// releases the pool's warm memory when the engine is idle.
struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl EpochTicker {
    fn start(
        engine: Engine,
        baseline: Arc<OnceLock<Option<Tier>>>,
        mut idle: IdleRelease,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("toolhost-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                    if let Some(Some(baseline)) = baseline.get() {
                        baseline.engine.increment_epoch();
                    }
                    idle.tick(&engine);
                }
            })?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_components_are_named() {
        let err = check_is_component(b"hello world").unwrap_err();
        assert!(err.to_string().contains("not a WebAssembly file"));
        let core = [0, b'a', b's', b'm', 1, 0, 0, 0];
        let err = check_is_component(&core).unwrap_err();
        assert!(err.to_string().contains("core WebAssembly module"));
        let component = [0, b'a', b's', b'm', 0x0d, 0, 1, 0];
        assert!(check_is_component(&component).is_ok());
    }
}
