//! `[telemetry]`: OpenTelemetry export settings.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::check_range;

/// `[telemetry]`: OpenTelemetry export of call spans and metrics over
/// OTLP/HTTP (protobuf), by the servers (`serve`, `mcp`).
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySettings {
    /// The collector's base URL, e.g. `http://127.0.0.1:4318`: spans go to
    /// `<it>/v1/traces`, metrics to `<it>/v1/metrics`. Unset: no export.
    pub otlp_endpoint: Option<String>,
    /// Headers sent with every export (e.g. an API key).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// How often metrics are exported, in milliseconds (default 60 000).
    pub export_interval_ms: Option<u64>,
    /// The `service.name` resource (default `toolhost`).
    pub service_name: Option<String>,
}

/// Header values may be secrets: `Debug` shows only their names.
impl std::fmt::Debug for TelemetrySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetrySettings")
            .field("otlp_endpoint", &self.otlp_endpoint)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("export_interval_ms", &self.export_interval_ms)
            .field("service_name", &self.service_name)
            .finish()
    }
}

/// The default metrics export interval, in milliseconds.
pub const DEFAULT_EXPORT_INTERVAL_MS: u64 = 60_000;

impl TelemetrySettings {
    /// How often metrics are exported.
    pub fn export_interval(&self) -> Duration {
        Duration::from_millis(
            self.export_interval_ms
                .unwrap_or(DEFAULT_EXPORT_INTERVAL_MS),
        )
    }

    pub(super) fn validate(&self) -> anyhow::Result<()> {
        check_range(
            "export_interval_ms",
            self.export_interval_ms,
            100..=3_600_000,
        )?;
        if let Some(endpoint) = &self.otlp_endpoint {
            let ok = (endpoint.starts_with("http://") || endpoint.starts_with("https://"))
                && endpoint.parse::<http::Uri>().is_ok();
            anyhow::ensure!(
                ok,
                "[telemetry] otlp_endpoint {endpoint:?} is not an http:// or https:// URL"
            );
        }
        for name in self.headers.keys() {
            anyhow::ensure!(
                http::HeaderName::from_bytes(name.as_bytes()).is_ok(),
                "[telemetry] headers: {name:?} is not a header name"
            );
        }
        Ok(())
    }
}
