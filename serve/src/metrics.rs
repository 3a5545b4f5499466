//! `/metrics` (on `serve`): Prometheus counters of calls by tool and outcome, call
//! durations, limit hits, histograms of each call's receipt (`usage`), and
//! the tools' own metrics (`toolhost:tool/metrics`) as `toolhost_tool_<name>`.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use toolhost::CallGate;
use toolhost::agents::LoadedVersions;
use toolhost::call::reminder_limits::ReminderFigures;
use toolhost::call::{CallObserver, CallResult};
use toolhost::error::CallError;
use toolhost::tool_metrics::{BUCKETS, MetricKind, SeriesValue, ToolMetrics};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    tool: String,
    /// `ok`, `is_error`, or the refusal's code.
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    tool: String,
    limit: String,
}

/// The `tool` label of calls to a name no tool has.
pub const UNKNOWN_TOOL: &str = "(unknown)";

/// The server's metrics, counted by every surface it serves (HTTP API and MCP).
pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    durations: Family<ToolLabels, Histogram>,
    limits: Family<LimitLabels, Counter>,
    usage: UsageHistograms,
    sessions: Gauge,
    running: Gauge,
    queued: Gauge,
    versions_loaded: Family<AgentLabels, Gauge>,
    components_loaded: Gauge,
    code_bytes: Gauge,
    reminders: ReminderMetrics,
}

/// What the server's reminders did, as `/metrics` shows it.
struct ReminderMetrics {
    running: Gauge,
    waiting: Gauge,
    fired: Family<ActionLabels, Counter>,
    deferred: Counter,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ActionLabels {
    action: &'static str,
}

impl ReminderMetrics {
    fn register(registry: &mut Registry) -> Self {
        let running = Gauge::default();
        registry.register(
            "reminder_calls_running",
            "Calls reminders made that run now (at most 4 at once)",
            running.clone(),
        );
        let waiting = Gauge::default();
        registry.register(
            "reminder_calls_waiting",
            "Calls reminders made that wait for one of those turns",
            waiting.clone(),
        );
        let fired = Family::<ActionLabels, Counter>::default();
        registry.register(
            "reminders_fired",
            "Reminders fired, by action (call, message)",
            fired.clone(),
        );
        let deferred = Counter::default();
        registry.register(
            "reminders_deferred",
            "Reminders put off because their session had spent its budget of reminder calls",
            deferred.clone(),
        );
        Self {
            running,
            waiting,
            fired,
            deferred,
        }
    }

    fn set(&self, figures: &ReminderFigures) {
        let raise = |counter: &Counter, to: u64| {
            counter.inc_by(to.saturating_sub(counter.get()));
        };
        self.running
            .set(i64::try_from(figures.running).unwrap_or(i64::MAX));
        self.waiting
            .set(i64::try_from(figures.waiting).unwrap_or(i64::MAX));
        raise(
            &self.fired.get_or_create(&ActionLabels { action: "call" }),
            figures.calls,
        );
        raise(
            &self
                .fired
                .get_or_create(&ActionLabels { action: "message" }),
            figures.messages,
        );
        raise(&self.deferred, figures.deferred);
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AgentLabels {
    agent: String,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new(Arc::default())
    }
}

/// The tools' metrics, read at each scrape.
#[derive(Debug)]
struct ToolMetricsCollector(Arc<ToolMetrics>);

impl Collector for ToolMetricsCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for metric in self.0.snapshot() {
            let name = format!("tool_{}", metric.name);
            let help = format!("A tool's metric, declared by `{}`", metric.declared_by);
            let kind = match metric.kind {
                MetricKind::Counter => MetricType::Counter,
                MetricKind::Histogram => MetricType::Histogram,
            };
            let mut family = encoder.encode_descriptor(&name, &help, None, kind)?;
            for (labels, value) in &metric.series {
                let mut series = family.encode_family(labels)?;
                match value {
                    SeriesValue::Counter(total) => {
                        series.encode_counter::<NoLabelSet, _, u64>(total, None)?;
                    }
                    SeriesValue::Histogram {
                        buckets,
                        sum,
                        count,
                    } => {
                        // prometheus-client writes `f64::MAX` as `+Inf` and sums the counts itself.
                        let bounds = BUCKETS.iter().copied().chain([f64::MAX]);
                        let counted: Vec<(f64, u64)> =
                            bounds.zip(buckets.iter().copied()).collect();
                        series.encode_histogram::<NoLabelSet>(*sum, *count, &counted, None)?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Metrics {
    /// The server's metrics, with the tools' own from `tool_metrics`.
    pub fn new(tool_metrics: Arc<ToolMetrics>) -> Self {
        let mut registry = Registry::with_prefix("toolhost");
        registry.register_collector(Box::new(ToolMetricsCollector(tool_metrics)));
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "calls",
            "Calls by tool and outcome (ok, is_error, or the refusal's code)",
            calls.clone(),
        );
        let durations = Family::<ToolLabels, Histogram>::new_with_constructor(|| {
            Histogram::new([
                0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                1.0, 2.5, 5.0, 10.0, 30.0,
            ])
        });
        registry.register(
            "call_duration_seconds",
            "Wall time of calls that ran, by tool",
            durations.clone(),
        );
        let limits = Family::<LimitLabels, Counter>::default();
        registry.register(
            "limit_hits",
            "Calls ended or refused in part by a limit (timeout, memory, host_memory, handles, \
             open_files, stack, output, cpu, processes, file_size), by tool",
            limits.clone(),
        );
        let usage = UsageHistograms::register(&mut registry);
        let sessions = Gauge::default();
        registry.register("sessions", "Sessions kept by the server", sessions.clone());
        let running = Gauge::default();
        registry.register(
            "calls_running",
            "Calls holding a slot to run tool code ([limits] max_concurrent_calls)",
            running.clone(),
        );
        let queued = Gauge::default();
        registry.register(
            "calls_queued",
            "Calls waiting for a slot ([limits] max_queued_calls)",
            queued.clone(),
        );
        let versions_loaded = Family::<AgentLabels, Gauge>::default();
        registry.register(
            "agent_versions_loaded",
            "Versions of each agent loaded: its latest and the older ones sessions still use",
            versions_loaded.clone(),
        );
        let components_loaded = Gauge::default();
        registry.register(
            "components_loaded",
            "Distinct compiled components the loaded versions hold",
            components_loaded.clone(),
        );
        let code_bytes = Gauge::default();
        registry.register(
            "loaded_code_bytes",
            "Bytes of compiled code the loaded versions hold",
            code_bytes.clone(),
        );
        let reminders = ReminderMetrics::register(&mut registry);
        Self {
            registry,
            calls,
            durations,
            limits,
            usage,
            sessions,
            running,
            queued,
            versions_loaded,
            components_loaded,
            code_bytes,
            reminders,
        }
    }
}

impl CallObserver for Metrics {
    fn finished(&self, tool: &str, outcome: Result<&CallResult, &CallError>) {
        self.record(tool, outcome);
    }
}

impl Metrics {
    /// Count one call's outcome.
    pub fn record(&self, tool: &str, outcome: Result<&CallResult, &CallError>) {
        // A name no tool has is the caller's to choose: one label for all of
        // them keeps the label set bounded.
        let tool = match outcome {
            Err(CallError::UnknownTool { .. }) => UNKNOWN_TOOL,
            _ => tool,
        };
        let label = match outcome {
            Ok(result) if result.is_error => "is_error",
            Ok(_) => "ok",
            Err(error) => error.code(),
        };
        self.calls
            .get_or_create(&CallLabels {
                tool: tool.to_string(),
                outcome: label.to_string(),
            })
            .inc();
        if let Ok(result) = outcome {
            #[allow(clippy::cast_precision_loss)]
            let seconds = result.duration_ms as f64 / 1000.0;
            self.durations
                .get_or_create(&ToolLabels {
                    tool: tool.to_string(),
                })
                .observe(seconds);
            if let Some(limit) = result.usage.limit {
                self.limits
                    .get_or_create(&LimitLabels {
                        tool: tool.to_string(),
                        limit: limit.name.name().to_string(),
                    })
                    .inc();
            }
            self.usage.observe(tool, &result.usage);
        }
    }

    /// The metrics in Prometheus text format, with the session count, the
    /// calls running and queued now, and what reminders did.
    pub fn render(
        &self,
        sessions: usize,
        gate: &CallGate,
        loaded: &LoadedVersions,
        reminders: &ReminderFigures,
    ) -> String {
        self.reminders.set(reminders);
        self.sessions
            .set(i64::try_from(sessions).unwrap_or(i64::MAX));
        self.versions_loaded.clear();
        for (pin, _) in &loaded.versions {
            self.versions_loaded
                .get_or_create(&AgentLabels {
                    agent: pin.name.clone(),
                })
                .inc();
        }
        self.components_loaded
            .set(i64::try_from(loaded.components).unwrap_or(i64::MAX));
        self.code_bytes
            .set(i64::try_from(loaded.code_bytes).unwrap_or(i64::MAX));
        self.running.set(i64::from(gate.running()));
        self.queued.set(i64::from(gate.waiting()));
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// Histograms of one part of the receipt, by tool.
type UsageFamily = Family<ToolLabels, Histogram, Buckets>;

/// Makes each tool's histogram with the same buckets.
#[derive(Clone)]
struct Buckets(Vec<f64>);

impl MetricConstructor<Histogram> for Buckets {
    fn new_metric(&self) -> Histogram {
        Histogram::new(self.0.iter().copied())
    }
}

/// One histogram per part of the receipt that a platform bills or alerts on.
struct UsageHistograms {
    peak_memory: UsageFamily,
    peak_host: UsageFamily,
    output: UsageFamily,
    kv_ops: UsageFamily,
    http_requests: UsageFamily,
    http_bytes_sent: UsageFamily,
    http_bytes_received: UsageFamily,
    epoch_ticks: UsageFamily,
    files_opened: UsageFamily,
    peak_files_open: UsageFamily,
}

impl UsageHistograms {
    fn register(registry: &mut Registry) -> Self {
        let mut family = |name: &str, help: &str, start: f64, factor: f64, count: u16| {
            let buckets = Buckets(exponential_buckets(start, factor, count).collect());
            let family = UsageFamily::new_with_constructor(buckets);
            registry.register(name, help, family.clone());
            family
        };
        Self {
            peak_memory: family(
                "call_peak_memory_bytes",
                "The most linear memory an instance of a call had, by tool",
                65536.0,
                4.0,
                10,
            ),
            peak_host: family(
                "call_peak_host_bytes",
                "The most host memory charged to a call at once, by tool",
                1024.0,
                4.0,
                10,
            ),
            output: family(
                "call_output_bytes",
                "The size of a call's result as the tool returned it, by tool",
                64.0,
                4.0,
                10,
            ),
            kv_ops: family(
                "call_kv_ops",
                "Key-value operations of a call, by tool",
                1.0,
                4.0,
                8,
            ),
            http_requests: family(
                "call_http_requests",
                "Outbound HTTP requests of a call, by tool",
                1.0,
                2.0,
                10,
            ),
            http_bytes_sent: family(
                "call_http_bytes_sent",
                "Request body bytes a call sent, by tool",
                256.0,
                4.0,
                10,
            ),
            http_bytes_received: family(
                "call_http_bytes_received",
                "Response body bytes a call received, by tool",
                256.0,
                4.0,
                10,
            ),
            epoch_ticks: family(
                "call_epoch_ticks",
                "5 ms epoch ticks a call's guest code ran through (its CPU time), by tool",
                1.0,
                4.0,
                8,
            ),
            files_opened: family(
                "call_files_opened",
                "Files and directories a call opened in its workspace, by tool",
                1.0,
                4.0,
                10,
            ),
            peak_files_open: family(
                "call_peak_files_open",
                "The most workspace files an instance of a call held open at once, by tool",
                1.0,
                4.0,
                10,
            ),
        }
    }

    #[allow(clippy::cast_precision_loss)]
    fn observe(&self, tool: &str, usage: &toolhost::usage::Usage) {
        let labels = ToolLabels {
            tool: tool.to_string(),
        };
        let parts = [
            (&self.peak_memory, usage.peak_memory_bytes as f64),
            (&self.peak_host, usage.peak_host_bytes as f64),
            (&self.output, usage.output_bytes as f64),
            (&self.kv_ops, f64::from(usage.kv_ops)),
            (&self.http_requests, f64::from(usage.http_requests)),
            (&self.http_bytes_sent, usage.http_bytes_sent as f64),
            (&self.http_bytes_received, usage.http_bytes_received as f64),
            (&self.epoch_ticks, usage.epoch_ticks as f64),
            (&self.files_opened, f64::from(usage.files_opened)),
            (&self.peak_files_open, f64::from(usage.peak_files_open)),
        ];
        for (family, value) in parts {
            family.get_or_create(&labels).observe(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolhost::error::InputError;

    #[test]
    fn refusals_are_counted_by_code() {
        let metrics = Metrics::default();
        metrics.record(
            "echo",
            Err(&CallError::InvalidInput {
                tool: "echo".into(),
                errors: vec![InputError {
                    pointer: String::new(),
                    message: "x".into(),
                }],
            }),
        );
        let gate = toolhost::config::HostLimits::default().call_gate();
        for name in ["nope", "nada"] {
            metrics.record(
                name,
                Err(&CallError::UnknownTool {
                    name: name.into(),
                    known: Vec::new(),
                }),
            );
        }
        let text = metrics.render(
            3,
            &gate,
            &LoadedVersions::default(),
            &ReminderFigures::default(),
        );
        assert!(
            text.contains(r#"toolhost_calls_total{tool="(unknown)",outcome="unknown_tool"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(r#"toolhost_calls_total{tool="echo",outcome="invalid_tool_input"} 1"#),
            "{text}"
        );
        assert!(text.contains("toolhost_sessions 3"), "{text}");
    }
}
