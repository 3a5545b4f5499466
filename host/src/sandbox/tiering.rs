//! Tiered compilation for reloads and a server's start: a tool the compile
//! cache lacks serves calls on baseline (Winch) code as soon as that is
//! compiled, and its code is swapped for the optimized (Cranelift)
//! compilation in the background.
//!
//! The swap happens inside the tool ([`CodeCell`]): the registry, the
//! tool's metadata and its checks stay as they are, calls already running
//! finish on the code they instantiated, and the next call instantiates the
//! optimized code.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::bindings::ContractPre;
use crate::plain;
use crate::sandbox::code::{Code, CodeCell, PlainCall, Pre, Source};
use crate::sandbox::engine::ToolEngine;
use crate::sandbox::instance::Instance;
use crate::sandbox::state::CallState;

/// How long the trial instantiation of optimized code may take.
const TRIAL_DEADLINE: Duration = Duration::from_secs(10);

/// A component loaded as baseline code, and the tools made of it.
pub(crate) struct Upgrade {
    /// The file's slug: the tool's name, or what a plain component's
    /// tools are named after.
    pub slug: String,
    /// What its optimized compile needs.
    pub source: Source,
    /// The tools it backs (one, or one per function of a plain component).
    pub cells: Vec<CodeCell>,
    /// The largest memory cap among those tools, for the trial instance.
    pub memory_bytes: usize,
}

impl std::fmt::Debug for Upgrade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upgrade")
            .field("slug", &self.slug)
            .field("tools", &self.cells.len())
            .finish_non_exhaustive()
    }
}

/// Compile each upgrade's component with Cranelift and swap the result into
/// its tools. A component whose optimized code cannot be instantiated keeps
/// running on its baseline code, with a warning.
pub(crate) fn spawn(engine: Arc<ToolEngine>, upgrades: Vec<Upgrade>) {
    if upgrades.is_empty() {
        return;
    }
    let guards: Vec<_> = upgrades.iter().map(|_| engine.optimizing()).collect();
    tokio::spawn(async move {
        for (upgrade, _guard) in upgrades.into_iter().zip(guards) {
            let slug = upgrade.slug.clone();
            let started = Instant::now();
            match optimize(&engine, upgrade).await {
                Ok(()) => tracing::info!(
                    "{slug}: optimized code swapped in after {} ms",
                    started.elapsed().as_millis()
                ),
                Err(e) => tracing::warn!("{slug}: keeps running on baseline code: {e:#}"),
            }
        }
    });
}

async fn optimize(engine: &ToolEngine, upgrade: Upgrade) -> anyhow::Result<()> {
    let component = engine.optimize(upgrade.source).await?;
    let pre = engine.instantiate_pre(&component)?;
    let mut functions = None;
    let mut optimized = Vec::with_capacity(upgrade.cells.len());
    for cell in upgrade.cells {
        let code = match cell.get() {
            Code::Contract(_) => Code::Contract(ContractPre::new(pre.clone())?),
            Code::Plain(call) => {
                let (functions, _) = functions.get_or_insert_with(|| {
                    plain::functions(component.engine(), &component, &upgrade.slug)
                });
                let index = functions
                    .iter()
                    .position(|f| f.name == call.function.name)
                    .context("the optimized component lacks a function the baseline one has")?;
                let function = functions.swap_remove(index);
                Code::Plain(Arc::new(PlainCall {
                    pre: pre.clone(),
                    function,
                }))
            }
        };
        optimized.push((cell, code));
    }
    trial(engine, &pre, upgrade.memory_bytes).await?;
    for (cell, code) in optimized {
        cell.set_optimized(code);
    }
    Ok(())
}

/// Instantiate the optimized code once, with no capabilities, so a
/// component that fits the on-demand baseline engine but not the instance
/// pool keeps its working baseline code instead of failing every call.
async fn trial(
    engine: &ToolEngine,
    pre: &wasmtime::component::InstancePre<CallState>,
    memory_bytes: usize,
) -> anyhow::Result<()> {
    Instance::for_load(engine, Pre::Plain(pre), memory_bytes, TRIAL_DEADLINE)
        .await
        .map(drop)
        .map_err(|e| anyhow::anyhow!("its optimized code cannot be instantiated: {e}"))
}
