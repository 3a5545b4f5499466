//! `toolhost:tool/metrics`: a call updates the tool's custom metrics
//! ([`crate::tool_metrics`] keeps them host-wide).
//!
//! GrantCtx per tool (`metrics = true`); refused without a grant, and while
//! loading or answering `effect-for` and `dry-run-result`. A read call may
//! update them: a metric changes nothing a call's effect is about. Each
//! update counts in the receipt, at most [`MAX_UPDATES_PER_CALL`] a call.

use std::sync::Arc;

use wasmtime::component::HasSelf;

use super::grant_ctx::GrantCtx;
use super::{CallScope, Capability, Grants, Outside};
use crate::bindings::toolhost::tool::metrics::Host;
use crate::tool_metrics::ToolMetrics;
use crate::usage::Meter;

/// The most metric updates one call may make.
pub const MAX_UPDATES_PER_CALL: u32 = 10_000;

/// What `grants` give a component importing `interface`, as `inspect`
/// shows it; `None` for another interface.
pub fn import_status(grants: &Grants, interface: &str) -> Option<String> {
    (interface == "toolhost:tool/metrics").then(|| {
        match grants.metrics {
            true => "granted: custom metrics",
            false => "NOT GRANTED (no metrics)",
        }
        .into()
    })
}

/// One instance's metrics: where updates go, or why they are refused.
pub type MetricsCtx = GrantCtx<Updates>;

/// Where a call's metric updates go.
pub struct Updates {
    /// The host's metrics.
    pub metrics: Arc<ToolMetrics>,
    /// The tool updating them.
    pub tool: String,
    /// The call's meter, counting the updates.
    pub meter: Arc<Meter>,
}

impl Capability for MetricsCtx {
    /// A read call may update them too: a metric changes nothing a call's
    /// effect is about.
    fn for_call(grants: &Grants, scope: &CallScope<'_>) -> anyhow::Result<Self> {
        let (metrics, tool) = scope.metrics;
        Ok(match grants.metrics {
            true => Self::granted(Updates {
                metrics: Arc::clone(metrics),
                tool: tool.to_string(),
                meter: scope.meter.clone(),
            }),
            false => Self::refused(
                "metrics are not granted to this tool (`metrics = true` in its [tools.<name>])",
            ),
        })
    }

    fn outside_a_call(_: &Outside<'_>) -> anyhow::Result<Self> {
        Ok(Self::refused(
            "metrics are not updated during loading, effect-for or dry-run",
        ))
    }
}

impl MetricsCtx {
    fn updates(&self) -> Result<Arc<Updates>, String> {
        let updates = self.grant()?;
        if updates.meter.metric_updated() > MAX_UPDATES_PER_CALL {
            return Err(format!(
                "this call made {MAX_UPDATES_PER_CALL} metric updates already, the most a call \
                 may"
            ));
        }
        Ok(updates)
    }
}

impl Host for MetricsCtx {
    fn counter_add(
        &mut self,
        name: String,
        value: f64,
        labels: Vec<(String, String)>,
    ) -> Result<(), String> {
        let updates = self.updates()?;
        updates
            .metrics
            .counter_add(&updates.tool, &name, value, &labels)
    }

    fn histogram_record(
        &mut self,
        name: String,
        value: f64,
        labels: Vec<(String, String)>,
    ) -> Result<(), String> {
        let updates = self.updates()?;
        updates
            .metrics
            .histogram_record(&updates.tool, &name, value, &labels)
    }
}

/// Link `toolhost:tool/metrics` into a linker whose store data holds a
/// [`MetricsCtx`].
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut MetricsCtx,
) -> wasmtime::Result<()> {
    crate::bindings::toolhost::tool::metrics::add_to_linker::<T, HasSelf<MetricsCtx>>(linker, get)
}
