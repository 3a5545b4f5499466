//! One fresh, sandboxed instance of a tool: build it, call one export, and
//! turn a trap or a limit hit into a one-line message.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::Val;
use wasmtime::{Store, Trap};

use crate::bindings::{Contract, guest, types};
use crate::caps::Caps;
use crate::caps::log::TraceLog;
use crate::caps::stdio::Capture;
use crate::config::DEFAULT_MAX_OUTPUT_BYTES;
use crate::deadline::Deadline;
use crate::plain::PlainFunction;
use crate::sandbox::code::Pre;
use crate::sandbox::engine::{MAX_WASM_STACK_BYTES, ToolEngine};
use crate::sandbox::state::CallState;
use crate::usage::{CallBounds, HostBudget, Limit, Meter};

/// How much of a tool's stdout/stderr is kept while loading it.
const LOAD_CAPTURE_BYTES: usize = 4096;

/// How long past the deadline a host call may run before the call is dropped.
const HOST_CALL_GRACE: Duration = Duration::from_millis(250);

/// Why an instance stopped without returning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The deadline passed.
    #[error("timed out: the call ran past its {}ms deadline (timeout_ms)", .0.as_millis())]
    Timeout(Duration),
    /// Linear memory would have grown past the cap.
    #[error("memory cap hit: the tool tried to grow past {} MiB (memory_mb)", .0 / (1024 * 1024))]
    Memory(usize),
    /// The call held more host memory than its budget allows.
    #[error("host memory cap hit: the tool made the host hold more than {} MiB for it (host_memory_mb)", .0 >> 20)]
    HostMemory(usize),
    /// One header map grew past its share of the host memory budget.
    #[error(
        "host memory cap hit: a header map grew past its {} KiB share of the host memory budget \
         (host_memory_mb / max_handles)",
        .0 >> 10
    )]
    HeaderMap(usize),
    /// The call held more resource handles than its cap allows.
    #[error("handle cap hit: the tool held more than {0} resource handles at once (max_handles)")]
    Handles(u32),
    /// The wasm stack overflowed.
    #[error("stack overflow: recursion went past the {} KiB wasm stack cap", MAX_WASM_STACK_BYTES / 1024)]
    StackOverflow,
    /// The guest trapped (a panic, an unreachable, a bad access).
    #[error("the tool trapped: {0}")]
    Trap(String),
    /// The host could not set the instance up.
    #[error("the host could not run the tool: {0}")]
    Host(String),
}

impl Failure {
    /// The limit this failure hit, as metrics and traces name it.
    pub fn limit(&self) -> Option<Limit> {
        match self {
            Self::Timeout(_) => Some(Limit::Timeout),
            Self::Memory(_) => Some(Limit::Memory),
            Self::HostMemory(_) | Self::HeaderMap(_) => Some(Limit::HostMemory),
            Self::Handles(_) => Some(Limit::Handles),
            Self::StackOverflow => Some(Limit::Stack),
            Self::Trap(_) | Self::Host(_) => None,
        }
    }
}

/// Call one export of the contract under the instance's deadline and
/// classify any failure (the four exports differ only in name and arguments).
macro_rules! call_guest {
    ($instance:expr, $method:ident ( $($arg:expr),* )) => {{
        let Instance { store, guest, budget, .. } = $instance;
        let Guest::Contract(guest) = guest else {
            return Err(Failure::Host("the tool does not implement the toolhost contract".into()));
        };
        let deadline = store.data().deadline.clone();
        let call = guest.$method(&mut *store $(, $arg)*);
        let outcome = within(&deadline, call).await;
        settle(outcome, store, *budget)
    }};
}

impl Pre<'_> {
    /// The engine its code was compiled by (optimized or baseline).
    fn engine(&self) -> &wasmtime::Engine {
        match self {
            Self::Contract(pre) => pre.instance_pre().engine(),
            Self::Plain(pre) => pre.engine(),
        }
    }
}

/// An instantiated guest.
enum Guest {
    Contract(Contract),
    Plain(wasmtime::component::Instance),
}

/// A fresh instance and its Store.
pub(crate) struct Instance {
    store: Store<CallState>,
    guest: Guest,
    budget: Duration,
    /// Held until the Store above is dropped (fields drop in order).
    _admission: tokio::sync::OwnedSemaphorePermit,
}

impl Instance {
    /// Instantiate `pre` in a fresh Store with `caps`, `bounds` and a deadline.
    pub async fn new(
        engine: &ToolEngine,
        pre: Pre<'_>,
        caps: Caps,
        trace: &TraceLog,
        bounds: CallBounds,
        deadline: Arc<Deadline>,
        budget: Duration,
    ) -> Result<Self, Failure> {
        let admission = engine
            .admit(deadline.at())
            .await
            .map_err(|e| Failure::Host(format!("{e:#}")))?;
        let host = bounds.host;
        let hostcall_bytes = host.hostcall_bytes(bounds.output_bytes);
        // A body buffers one write in flight and one queued (buffer_chunks + 1).
        let http = caps.http.with_body_chunk_bytes(host.per_handle_bytes() / 2);
        let state = CallState::new(
            Caps { http, ..caps },
            trace.clone(),
            bounds,
            deadline.clone(),
        );
        let mut store = engine.store(pre.engine(), state);
        store.set_max_component_handles(host.handles as usize);
        store.set_hostcall_fuel(hostcall_bytes);
        let instantiate = async {
            match pre {
                Pre::Contract(pre) => pre.instantiate_async(&mut store).await.map(Guest::Contract),
                Pre::Plain(pre) => pre.instantiate_async(&mut store).await.map(Guest::Plain),
            }
        };
        let guest = match within(&deadline, instantiate).await {
            Some(Ok(guest)) => guest,
            Some(Err(e)) => return Err(classify(&e, &store, budget)),
            None => return Err(Failure::Timeout(budget)),
        };
        Ok(Self {
            store,
            guest,
            budget,
            _admission: admission,
        })
    }

    /// Instantiate `pre` as a load does: no capabilities, its output kept
    /// up to a few KiB and dropped, a memory cap, the default host budget
    /// and `budget` from now.
    pub async fn for_load(
        engine: &ToolEngine,
        pre: Pre<'_>,
        memory_bytes: usize,
        budget: Duration,
    ) -> Result<Self, Failure> {
        let host = HostBudget::default();
        let bounds = CallBounds {
            memory_bytes,
            host,
            meter: Meter::new(host),
            output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
        };
        let trace = TraceLog::default();
        let capture = Capture::new(LOAD_CAPTURE_BYTES);
        let caps =
            Caps::none(&trace, &capture, &capture).map_err(|e| Failure::Host(format!("{e:#}")))?;
        let deadline = Deadline::new(Instant::now() + budget);
        Self::new(engine, pre, caps, &trace, bounds, deadline, budget).await
    }

    /// Call `metadata`.
    pub async fn metadata(&mut self) -> Result<types::ToolMetadata, Failure> {
        call_guest!(self, call_metadata())
    }

    /// Call `effect-for`.
    pub async fn effect_for(&mut self, input: &str) -> Result<types::Effect, Failure> {
        call_guest!(self, call_effect_for(input))
    }

    /// Call `dry-run-result`.
    pub async fn dry_run_result(
        &mut self,
        input: &str,
    ) -> Result<Option<types::ToolOutput>, Failure> {
        call_guest!(self, call_dry_run_result(input))
    }

    /// Call `prompts.list-prompts` (none when the component offers none).
    pub async fn list_prompts(&mut self) -> Result<Vec<crate::bindings::Prompt>, Failure> {
        call_guest!(self, call_list_prompts())
    }

    /// Call `prompts.get-prompt`.
    pub async fn get_prompt(
        &mut self,
        name: &str,
        arguments: &[(String, String)],
    ) -> Result<Result<crate::bindings::PromptResult, String>, Failure> {
        call_guest!(self, call_get_prompt(name, arguments))
    }

    /// Call `prompts.complete-argument`.
    pub async fn complete_argument(
        &mut self,
        name: &str,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, Failure> {
        call_guest!(self, call_complete_argument(name, argument, value))
    }

    /// Call `resources.list-resources` and `list-resource-templates` (none
    /// when the component offers none).
    pub async fn list_resources(
        &mut self,
    ) -> Result<
        (
            Vec<crate::bindings::ResourceInfo>,
            Vec<crate::bindings::ResourceTemplate>,
        ),
        Failure,
    > {
        call_guest!(self, call_list_resources())
    }

    /// Call `resources.read-resource`.
    pub async fn read_resource(
        &mut self,
        uri: &str,
        parameters: &[(String, String)],
    ) -> Result<Result<Vec<crate::bindings::ResourceContents>, crate::bindings::ReadError>, Failure>
    {
        call_guest!(self, call_read_resource(uri, parameters))
    }

    /// Call `execute`.
    pub async fn execute(
        &mut self,
        input: &str,
        ctx: &guest::CallContext,
    ) -> Result<Result<types::ToolOutput, types::ToolError>, Failure> {
        call_guest!(self, call_execute(input, ctx))
    }
}

impl Instance {
    /// Call a plain component's function with `params`; its result, if it
    /// returns one.
    pub async fn call_plain(
        &mut self,
        function: &PlainFunction,
        params: &[Val],
    ) -> Result<Option<Val>, Failure> {
        let Instance {
            store,
            guest,
            budget,
            ..
        } = self;
        let Guest::Plain(instance) = guest else {
            return Err(Failure::Host("the tool is not a plain component".into()));
        };
        let func = instance
            .get_func(&mut *store, function.index)
            .ok_or_else(|| Failure::Host(format!("no export {}", function.export_path())))?;
        let mut results = vec![Val::Bool(false); usize::from(function.result.is_some())];
        let deadline = store.data().deadline.clone();
        let call = func.call_async(&mut *store, params, &mut results);
        let outcome = within(&deadline, call).await;
        settle(outcome, store, *budget)?;
        Ok(results.pop())
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let state = self.store.data();
        state.meter.memory_peak(state.limits.memory_in_use());
    }
}

/// `work`'s outcome, or `None` when it is abandoned: the deadline passed
/// (stopped while the call waits for an answer) plus a grace for host
/// calls.
async fn within<R>(deadline: &Deadline, work: impl Future<Output = R>) -> Option<R> {
    // The work first: most finish on their first poll, and then no timer
    // is registered (registering one earlier than the runtime's next wakes
    // its driver: a system call a call).
    tokio::select! {
        biased;
        outcome = work => Some(outcome),
        () = deadline.expired(HOST_CALL_GRACE) => None,
    }
}

/// Classify the outcome of a guest call made [`within`] its deadline.
fn settle<R>(
    outcome: Option<wasmtime::Result<R>>,
    store: &Store<CallState>,
    budget: Duration,
) -> Result<R, Failure> {
    match outcome {
        Some(Ok(value)) => Ok(value),
        Some(Err(e)) => Err(classify(&e, store, budget)),
        None => Err(Failure::Timeout(budget)),
    }
}

fn classify(error: &wasmtime::Error, store: &Store<CallState>, budget: Duration) -> Failure {
    let state = store.data();
    if state.timed_out {
        return Failure::Timeout(budget);
    }
    if state.limits.memory_hit {
        return Failure::Memory(state.limits.memory_bytes());
    }
    if is_handle_cap(error) {
        return Failure::Handles(u32::try_from(state.table.max_capacity()).unwrap_or(u32::MAX));
    }
    let text = format!("{error:#}");
    if text.contains(HOSTCALL_FUEL_EXHAUSTED) {
        return Failure::HostMemory(state.meter.host_limit());
    }
    if text.contains(FIELDS_TOO_BIG) {
        return Failure::HeaderMap(state.meter.host_limit() / state.table.max_capacity().max(1));
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::StackOverflow) => Failure::StackOverflow,
        Some(Trap::Interrupt) => Failure::Timeout(budget),
        Some(Trap::MemoryOutOfBounds) => Failure::Trap(format!(
            "{} (a guest whose shadow stack overflows, e.g. by unbounded recursion, traps this way)",
            Trap::MemoryOutOfBounds
        )),
        Some(trap) => Failure::Trap(trap.to_string()),
        // A host function's own error: what it said, not the backtrace
        // wasmtime wraps it in.
        None => Failure::Trap(first_line(&error.root_cause().to_string())),
    }
}

/// How wasmtime says one guest-to-host call copied more than its hostcall
/// fuel allows (its error type is private).
const HOSTCALL_FUEL_EXHAUSTED: &str = "fuel allocated for hostcalls has been exhausted";

/// How wasmtime-wasi-http traps a header map that grows past its size limit.
const FIELDS_TOO_BIG: &str = "total size of fields exceeds limit";

/// Whether `error` is the resource table or wasmtime's handle counter
/// refusing one more handle.
fn is_handle_cap(error: &wasmtime::Error) -> bool {
    error.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<wasmtime::component::ResourceTableError>(),
            Some(wasmtime::component::ResourceTableError::Full)
        ) || cause.to_string().contains("store handle limit exceeded")
    })
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or(text).to_string()
}
