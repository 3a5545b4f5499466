//! `[telemetry] otlp_endpoint`: call spans and metrics reach a real OTLP/HTTP
//! receiver, which decodes the protobuf it gets and keeps it for the checks.

use crate::common;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::json;
use toolhost_serve::telemetry::Telemetry;

/// What the receiver got.
#[derive(Default)]
struct Received {
    traces: Vec<ExportTraceServiceRequest>,
    metrics: Vec<ExportMetricsServiceRequest>,
    api_keys: Vec<String>,
}

type Shared = Arc<Mutex<Received>>;

fn api_key(headers: &HeaderMap) -> String {
    headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

async fn traces(State(seen): State<Shared>, headers: HeaderMap, body: Bytes) -> Vec<u8> {
    let request = ExportTraceServiceRequest::decode(body).expect("a trace export");
    let mut seen = seen.lock().unwrap();
    seen.api_keys.push(api_key(&headers));
    seen.traces.push(request);
    Vec::new()
}

async fn metrics(State(seen): State<Shared>, headers: HeaderMap, body: Bytes) -> Vec<u8> {
    let request = ExportMetricsServiceRequest::decode(body).expect("a metrics export");
    let mut seen = seen.lock().unwrap();
    seen.api_keys.push(api_key(&headers));
    seen.metrics.push(request);
    Vec::new()
}

/// An OTLP/HTTP receiver on 127.0.0.1: its base URL and what it got.
async fn receiver() -> (String, Shared) {
    let seen = Shared::default();
    let app = Router::new()
        .route("/v1/traces", post(traces))
        .route("/v1/metrics", post(metrics))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, seen)
}

fn text(value: &Option<AnyValue>) -> String {
    match value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

fn attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .map(|kv| text(&kv.value))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_spans_and_metrics_reach_an_otlp_receiver() {
    let (base, seen) = receiver().await;
    let config = format!(
        "[telemetry]\notlp_endpoint = \"{base}\"\nservice_name = \"toolhost-test\"\n\
         headers = {{ x-api-key = \"k3y\" }}\n\
         [tools.journal]\nstate = \"write\"\nmetrics = true\n"
    );
    let (_dir, host) = common::host(&["journal", "echo"], &config).await;
    let telemetry = Telemetry::start(&host, &host.config().telemetry)
        .unwrap()
        .expect("an endpoint is set");

    let options = common::live();
    let session = options.session.id().to_string();
    let added = host
        .call("journal", json!({"entry": "traced"}), &options)
        .await
        .unwrap();
    assert!(!added.is_error, "{:?}", added.result);
    host.call("echo", json!({"text": "hi"}), &options)
        .await
        .unwrap();
    host.call("nope", json!({}), &options).await.unwrap_err();
    telemetry.flush().await;

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert!(
        seen.api_keys.iter().all(|k| k == "k3y"),
        "{:?}",
        seen.api_keys
    );
    let resource = seen.traces[0].resource_spans[0].resource.as_ref().unwrap();
    assert_eq!(
        attribute(&resource.attributes, "service.name").as_deref(),
        Some("toolhost-test")
    );
    let spans: Vec<&Span> = seen
        .traces
        .iter()
        .flat_map(|t| &t.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .collect();
    let span = |name: &str| {
        spans.iter().find(|s| s.name == name).unwrap_or_else(|| {
            panic!(
                "no span {name}: {:?}",
                spans.iter().map(|s| &s.name).collect::<Vec<_>>()
            )
        })
    };
    let journal = span("call journal");
    let attr = |key: &str| attribute(&journal.attributes, key);
    assert_eq!(attr("toolhost.tool").as_deref(), Some("journal"));
    assert_eq!(attr("toolhost.session"), Some(session.clone()));
    assert_eq!(attr("toolhost.effect").as_deref(), Some("write"));
    assert_eq!(attr("toolhost.outcome").as_deref(), Some("ok"));
    assert_eq!(attr("toolhost.attempts").as_deref(), Some("1"));
    assert_eq!(attr("toolhost.call_id"), Some(added.call.id.clone()));
    assert_eq!(attr("toolhost.usage.metric_updates").as_deref(), Some("2"));
    assert!(journal.end_time_unix_nano >= journal.start_time_unix_nano);
    assert_eq!(
        attribute(&span("call echo").attributes, "toolhost.effect").as_deref(),
        Some("read")
    );
    let refused = span("call nope");
    assert_eq!(
        attribute(&refused.attributes, "toolhost.outcome").as_deref(),
        Some("unknown_tool")
    );
    assert_eq!(
        refused.status.as_ref().map(|s| s.code),
        Some(2),
        "an error status"
    );

    // The tools' metrics and the call counters.
    let last = seen.metrics.last().expect("a metrics export");
    let metrics: Vec<_> = last
        .resource_metrics
        .iter()
        .flat_map(|r| &r.scope_metrics)
        .flat_map(|s| &s.metrics)
        .collect();
    let metric = |name: &str| {
        metrics.iter().find(|m| m.name == name).unwrap_or_else(|| {
            panic!(
                "no metric {name}: {:?}",
                metrics.iter().map(|m| &m.name).collect::<Vec<_>>()
            )
        })
    };
    let Some(Data::Sum(entries)) = &metric("tool.journal_entries").data else {
        panic!("tool.journal_entries is not a sum");
    };
    let point = &entries.data_points[0];
    assert_eq!(
        attribute(&point.attributes, "tool").as_deref(),
        Some("journal")
    );
    assert_eq!(
        attribute(&point.attributes, "channel").as_deref(),
        Some("none")
    );
    assert_eq!(
        point.value,
        Some(opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsDouble(1.0))
    );
    let Some(Data::Histogram(appends)) = &metric("tool.journal_append_seconds").data else {
        panic!("tool.journal_append_seconds is not a histogram");
    };
    assert_eq!(appends.data_points[0].count, 1);
    assert_eq!(appends.data_points[0].explicit_bounds.len(), 11);
    let Some(Data::Sum(calls)) = &metric("toolhost.calls").data else {
        panic!("toolhost.calls is not a sum");
    };
    let outcomes: Vec<_> = calls
        .data_points
        .iter()
        .map(|p| attribute(&p.attributes, "outcome").unwrap_or_default())
        .collect();
    assert!(
        outcomes.contains(&"unknown_tool".to_string()),
        "{outcomes:?}"
    );
    telemetry.shutdown().await;
}

/// `toolhost serve` exports what its calls did, and sends what is left
/// when it stops (SIGTERM) rather than losing it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_exports_its_calls_and_flushes_when_it_stops() {
    let (base, seen) = receiver().await;
    // Metrics every hour: only the flush at shutdown sends them.
    let config = format!(
        "[telemetry]\notlp_endpoint = \"{base}/\"\nexport_interval_ms = 3600000\n\
         headers = {{ x-api-key = \"k3y\" }}\n"
    );
    let dir = common::host_dir(&["echo"], &config);
    let path = dir.path().to_path_buf();
    let mut served = tokio::task::spawn_blocking(move || common::process::serve(&path, &[]))
        .await
        .unwrap();
    let response = common::http_client()
        .post(format!("{}/toolhost/v1/tools/echo", served.url))
        .json(&json!({"input": {"text": "over http"}}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    served.signal(libc::SIGTERM);
    let (served, status) = tokio::task::spawn_blocking(move || {
        let status = served.wait_for_exit(std::time::Duration::from_secs(30));
        (served, status)
    })
    .await
    .unwrap();
    assert!(status.is_some_and(|s| s.success()), "{}", served.stderr());

    let seen = seen.lock().unwrap();
    let names: Vec<&str> = seen
        .traces
        .iter()
        .flat_map(|t| &t.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["call echo"], "{}", served.stderr());
    let metric_names: Vec<&str> = seen
        .metrics
        .iter()
        .flat_map(|m| &m.resource_metrics)
        .flat_map(|r| &r.scope_metrics)
        .flat_map(|s| &s.metrics)
        .map(|m| m.name.as_str())
        .collect();
    assert!(metric_names.contains(&"toolhost.calls"), "{metric_names:?}");
    assert!(
        seen.api_keys.iter().all(|k| k == "k3y"),
        "{:?}",
        seen.api_keys
    );
}
