//! `query_telemetry`: hourly CPU or memory readings in a time window.

use chrono::{DateTime, SecondsFormat, Utc};
use toolhost_sdk::prelude::*;

/// At most this many points are returned.
const MAX_POINTS: usize = 1000;

/// Which reading.
#[derive(Deserialize, JsonSchema, Default, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Metric {
    /// CPU use, percent.
    #[default]
    Cpu,
    /// Memory in use, MiB.
    Memory,
}

/// The window to query.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// Start of the window: an RFC 3339 instant with a timezone, e.g. `2026-11-01T00:00:00Z`.
    #[schemars(extend("format" = "date-time"))]
    since: String,
    /// End of the window (inclusive), RFC 3339.
    #[schemars(extend("format" = "date-time"))]
    until: String,
    /// The metric (default `cpu`).
    #[serde(default)]
    metric: Metric,
}

fn instant(name: &str, text: &str) -> Result<DateTime<Utc>, ToolError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.to_utc())
        .map_err(|err| {
            ToolError::invalid_input(format!("`{name}` is not an RFC 3339 instant: {err}"))
        })
}

/// The reading for an hour since the epoch: a daily curve plus steady noise.
fn reading(metric: Metric, hour: i64) -> f64 {
    let day = (1.0 - (std::f64::consts::TAU * hour.rem_euclid(24) as f64 / 24.0).cos()) / 2.0;
    let mut x = (hour as u64).wrapping_add(0x9E37_79B9_7F4A_7C15); // splitmix64
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    let noise = ((x ^ (x >> 31)) % 1000) as f64 / 1000.0;
    let value = match metric {
        Metric::Cpu => 15.0 + 60.0 * day + 10.0 * noise,
        Metric::Memory => 2048.0 + 1024.0 * day + 256.0 * noise,
    };
    (value * 10.0).round() / 10.0
}

struct QueryTelemetry;

impl Tool for QueryTelemetry {
    type Input = Input;
    const DESCRIPTION: &'static str = "
        Hourly readings of a service metric (cpu in percent, memory in MiB)
        between two instants, at most 1000 points. Use it to see how a
        service behaved over a period; `since` and `until` are RFC 3339 instants.
        It returns the points with their times and cannot change anything.
    ";
    const EFFECT: EffectDecl = EffectDecl::Fixed(Effect::Read);
    const TIME_ARGS: &'static [&'static str] = &["since", "until"];

    fn execute(input: Input, _ctx: &CallContext) -> Result<Output, ToolError> {
        let (since, until) = (
            instant("since", &input.since)?,
            instant("until", &input.until)?,
        );
        if since > until {
            return Err(ToolError::invalid_input("`since` is later than `until`"));
        }
        // The first whole hour at or after `since`, through the last one at or before `until`.
        let since_secs = since.timestamp() + i64::from(since.timestamp_subsec_nanos() > 0);
        let first = (since_secs + 3599).div_euclid(3600);
        let last = until.timestamp().div_euclid(3600);
        let hours = usize::try_from(last - first + 1).unwrap_or(0);
        let points: Vec<Value> = (first..=last)
            .take(MAX_POINTS)
            .filter_map(|hour| {
                let time = DateTime::from_timestamp(hour * 3600, 0)?;
                Some(json!({
                    "time": time.to_rfc3339_opts(SecondsFormat::Secs, true),
                    "value": reading(input.metric, hour),
                }))
            })
            .collect();
        let (name, unit) = match input.metric {
            Metric::Cpu => ("cpu", "percent"),
            Metric::Memory => ("memory", "MiB"),
        };
        Ok(json!({
            "metric": name,
            "unit": unit,
            "since": since.to_rfc3339_opts(SecondsFormat::AutoSi, true),
            "until": until.to_rfc3339_opts(SecondsFormat::AutoSi, true),
            "points": points,
            "truncated": hours > MAX_POINTS,
        })
        .into())
    }
}

export_tool!(QueryTelemetry);
