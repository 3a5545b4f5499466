//! OpenTelemetry export (`[telemetry] otlp_endpoint`): a span for every
//! call and the metrics (calls, durations and the tools' own) sent over
//! OTLP/HTTP in protobuf, by the `opentelemetry` SDK's batch span processor
//! and periodic metric reader.
//!
//! The SDK exports from threads of its own; its requests are made by the
//! server's HTTP client on the server's runtime (`RuntimeClient`). Export
//! failures are logged by the SDK and never reach a call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use bytes::Bytes;
use opentelemetry::metrics::{Counter, Histogram, Meter, MeterProvider as _};
use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer as _, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

use toolhost::call::{CallObserver, CallResult};
use toolhost::config::TelemetrySettings;
use toolhost::error::CallError;
use toolhost::host::Host;
use toolhost::tool_metrics::{BUCKETS, MetricSink};

/// How long one export may take before the SDK gives up on it.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// The buckets of the call duration histogram, in seconds.
const DURATION_BUCKETS: [f64; 17] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0,
];

/// A running export: spans and metrics to one collector.
pub struct Telemetry {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Start exporting `host`'s calls and metrics as `settings` say; `None`
    /// when no endpoint is set. Must run inside the server's runtime.
    pub fn start(host: &Host, settings: &TelemetrySettings) -> anyhow::Result<Option<Self>> {
        let Some(endpoint) = settings.otlp_endpoint.as_deref() else {
            return Ok(None);
        };
        let base = endpoint.trim_end_matches('/');
        let client = RuntimeClient::new()?;
        let headers: HashMap<String, String> = settings.headers.clone().into_iter().collect();
        let resource = Resource::builder()
            .with_service_name(
                settings
                    .service_name
                    .clone()
                    .unwrap_or_else(|| "toolhost".into()),
            )
            .build();

        let spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client.clone())
            .with_endpoint(format!("{base}/v1/traces"))
            .with_headers(headers.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .context("cannot make the OTLP span exporter")?;
        let tracer_provider = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone())
            .build();

        let metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_endpoint(format!("{base}/v1/metrics"))
            .with_headers(headers)
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .context("cannot make the OTLP metric exporter")?;
        let reader = PeriodicReader::builder(metrics)
            .with_interval(settings.export_interval())
            .build();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(reader)
            .with_resource(resource)
            .build();

        let meter = meter_provider.meter("toolhost");
        host.tool_metrics()
            .set_sink(Arc::new(ToolInstruments::new(meter.clone())));
        host.observe(Arc::new(CallSpans {
            tracer: tracer_provider.tracer("toolhost"),
            calls: meter
                .u64_counter("toolhost.calls")
                .with_description("Calls by tool and outcome (ok, is_error, or the refusal's code)")
                .build(),
            durations: meter
                .f64_histogram("toolhost.call.duration")
                .with_unit("s")
                .with_description("Wall time of calls that ran, by tool")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
        }));
        tracing::info!("exporting call spans and metrics to {base} over OTLP/HTTP");
        Ok(Some(Self {
            tracer_provider,
            meter_provider,
        }))
    }

    /// Send what is waiting (ended spans, the metrics now) and wait for it.
    pub async fn flush(&self) {
        let (spans, metrics) = (self.tracer_provider.clone(), self.meter_provider.clone());
        // The SDK's flush blocks until its export thread is done, and that
        // export runs on this runtime: wait on the blocking pool.
        let flushed =
            tokio::task::spawn_blocking(move || (spans.force_flush(), metrics.force_flush())).await;
        match flushed {
            Ok((Ok(()), Ok(()))) => {}
            Ok((spans, metrics)) => {
                tracing::warn!(?spans, ?metrics, "cannot flush telemetry");
            }
            Err(e) => tracing::warn!("cannot flush telemetry: {e}"),
        }
    }

    /// Flush, then stop the exporters.
    pub async fn shutdown(self) {
        self.flush().await;
        let Self {
            tracer_provider,
            meter_provider,
        } = self;
        let _ = tokio::task::spawn_blocking(move || {
            let _ = tracer_provider.shutdown();
            let _ = meter_provider.shutdown();
        })
        .await;
    }
}

/// One span per call, and the call counters.
struct CallSpans {
    tracer: SdkTracer,
    calls: Counter<u64>,
    durations: Histogram<f64>,
}

impl CallObserver for CallSpans {
    fn finished(&self, tool: &str, outcome: Result<&CallResult, &CallError>) {
        let end = SystemTime::now();
        let mut attributes = vec![KeyValue::new("toolhost.tool", tool.to_string())];
        let (outcome_name, start) = match outcome {
            Ok(result) => {
                attributes.extend(call_attributes(result));
                let name = if result.is_error { "is_error" } else { "ok" };
                let took = Duration::from_millis(result.duration_ms);
                (name.to_string(), end.checked_sub(took).unwrap_or(end))
            }
            // The code only: a refusal's message may quote the input.
            Err(refused) => (refused.code().to_string(), end),
        };
        attributes.push(KeyValue::new("toolhost.outcome", outcome_name.clone()));
        self.calls.add(
            1,
            &[
                KeyValue::new("tool", tool.to_string()),
                KeyValue::new("outcome", outcome_name.clone()),
            ],
        );
        if let Ok(result) = outcome {
            #[allow(clippy::cast_precision_loss)]
            let seconds = result.duration_ms as f64 / 1000.0;
            self.durations
                .record(seconds, &[KeyValue::new("tool", tool.to_string())]);
        }
        let mut span = self
            .tracer
            .span_builder(format!("call {tool}"))
            .with_kind(SpanKind::Internal)
            .with_start_time(start)
            .with_attributes(attributes)
            .start(&self.tracer);
        if outcome_name != "ok" {
            span.set_status(Status::error(outcome_name));
        }
        span.end_with_timestamp(end);
    }
}

/// A call's span attributes: who, where, what it did and the receipt.
fn call_attributes(result: &CallResult) -> Vec<KeyValue> {
    let usage = &result.usage;
    let int = |n: u64| Value::I64(i64::try_from(n).unwrap_or(i64::MAX));
    let mut attributes = vec![
        KeyValue::new("toolhost.call_id", result.call.id.clone()),
        KeyValue::new("toolhost.session", result.trace.session_id.clone()),
        KeyValue::new("toolhost.attempts", i64::from(result.attempts)),
        KeyValue::new("toolhost.stubbed", result.stubbed),
        KeyValue::new("toolhost.is_error", result.is_error),
    ];
    if let Some(effect) = result.trace.effect {
        attributes.push(KeyValue::new("toolhost.effect", effect.name()));
    }
    let receipt = [
        ("wall_us", usage.wall_us),
        ("peak_memory_bytes", usage.peak_memory_bytes),
        ("peak_host_bytes", usage.peak_host_bytes),
        ("kv_ops", u64::from(usage.kv_ops)),
        ("kv_bytes_read", usage.kv_bytes_read),
        ("kv_bytes_written", usage.kv_bytes_written),
        ("http_requests", u64::from(usage.http_requests)),
        ("http_bytes_sent", usage.http_bytes_sent),
        ("http_bytes_received", usage.http_bytes_received),
        ("epoch_ticks", usage.epoch_ticks),
        ("output_bytes", usage.output_bytes),
        ("files_opened", u64::from(usage.files_opened)),
        ("artifacts_saved", u64::from(usage.artifacts_saved)),
        ("artifact_bytes", usage.artifact_bytes),
        ("metric_updates", u64::from(usage.metric_updates)),
        ("messages_sent", u64::from(usage.messages_sent)),
        ("reminders_scheduled", u64::from(usage.reminders_scheduled)),
    ];
    attributes.extend(
        receipt
            .into_iter()
            .map(|(name, value)| KeyValue::new(format!("toolhost.usage.{name}"), int(value))),
    );
    if let Some(limit) = usage.limit {
        attributes.push(KeyValue::new("toolhost.limit", limit.name.name()));
    }
    attributes
}

/// The tools' metrics as OpenTelemetry instruments, made at first use.
struct ToolInstruments {
    meter: Meter,
    counters: Mutex<HashMap<String, Counter<f64>>>,
    histograms: Mutex<HashMap<String, Histogram<f64>>>,
}

impl ToolInstruments {
    fn new(meter: Meter) -> Self {
        Self {
            meter,
            counters: Mutex::default(),
            histograms: Mutex::default(),
        }
    }
}

fn key_values(labels: &[(String, String)]) -> Vec<KeyValue> {
    labels
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect()
}

impl MetricSink for ToolInstruments {
    fn counter_add(&self, name: &str, value: f64, labels: &[(String, String)]) {
        // The host bounds the names (`tool_metrics`), so these maps are bounded too.
        let counter = self
            .counters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_string())
            .or_insert_with(|| self.meter.f64_counter(format!("tool.{name}")).build())
            .clone();
        counter.add(value, &key_values(labels));
    }

    fn histogram_record(&self, name: &str, value: f64, labels: &[(String, String)]) {
        let histogram = self
            .histograms
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_string())
            .or_insert_with(|| {
                self.meter
                    .f64_histogram(format!("tool.{name}"))
                    .with_boundaries(BUCKETS.to_vec())
                    .build()
            })
            .clone();
        histogram.record(value, &key_values(labels));
    }
}

/// The exporters' HTTP client: reqwest on the server's runtime, reached
/// from the SDK's export threads.
#[derive(Debug, Clone)]
struct RuntimeClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl RuntimeClient {
    fn new() -> anyhow::Result<Self> {
        Ok(Self {
            client: reqwest::Client::builder()
                .use_preconfigured_tls(toolhost::caps::http::client_tls_config()?)
                .timeout(EXPORT_TIMEOUT)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .context("cannot make the OTLP HTTP client")?,
            runtime: tokio::runtime::Handle::try_current()
                .context("telemetry starts inside the server's runtime")?,
        })
    }
}

/// The most of a collector's answer that is read.
const MAX_RESPONSE_BYTES: usize = 1 << 20;

#[async_trait::async_trait]
impl HttpClient for RuntimeClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let sent = self.runtime.spawn(async move {
            let request = reqwest::Request::try_from(request)?;
            let mut response = client.execute(request).await?;
            let mut answer = Response::builder().status(response.status());
            if let Some(headers) = answer.headers_mut() {
                *headers = response.headers().clone();
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            Ok::<_, HttpError>(answer.body(Bytes::from(body))?)
        });
        sent.await?
    }
}
