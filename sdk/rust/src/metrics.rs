//! Custom metrics (`toolhost:tool/metrics`): counters and histograms the
//! tool updates, exported on `serve`'s `/metrics` as `toolhost_tool_<name>`
//! with the tool's name as the `tool` label, and over OTLP when the host
//! has an `otlp_endpoint`.
//!
//! The operator grants them: `metrics = true` in the tool's
//! `[tools.<name>]`. A metric is declared by its first update (its kind and
//! label names are fixed then, host-wide); names are 1-64 characters of
//! a-z, 0-9 and `_`, at most 4 labels. Don't end a counter's name in
//! `_total`: Prometheus adds it.
//!
//! ```no_run
//! use toolhost_sdk::metrics;
//! # fn run() -> Result<(), toolhost_sdk::metrics::Error> {
//! metrics::counter("jobs_done").add(1.0, &[("kind", "build")])?;
//! metrics::histogram("build_seconds").record(0.42, &[])?;
//! # Ok(()) }
//! ```

use std::fmt;

use crate::bindings::toolhost::tool::metrics as wit;

/// Why the host refused an update: not granted, a bad name, label or
/// value, or a bound reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "metrics: {}", self.0)
    }
}

impl std::error::Error for Error {}

fn labels(labels: &[(&str, &str)]) -> Vec<(String, String)> {
    labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A counter: a total that only grows.
#[derive(Debug, Clone)]
pub struct Counter(String);

/// The counter `name`.
pub fn counter(name: &str) -> Counter {
    Counter(name.to_string())
}

impl Counter {
    /// Add `value` (finite, at least 0) to the series of `labels`.
    pub fn add(&self, value: f64, label_pairs: &[(&str, &str)]) -> Result<(), Error> {
        wit::counter_add(&self.0, value, &labels(label_pairs)).map_err(Error)
    }
}

/// A histogram: a distribution of recorded values (buckets 0.005 to 10,
/// Prometheus' defaults: record seconds).
#[derive(Debug, Clone)]
pub struct Histogram(String);

/// The histogram `name`.
pub fn histogram(name: &str) -> Histogram {
    Histogram(name.to_string())
}

impl Histogram {
    /// Record `value` (finite) in the series of `labels`.
    pub fn record(&self, value: f64, label_pairs: &[(&str, &str)]) -> Result<(), Error> {
        wit::histogram_record(&self.0, value, &labels(label_pairs)).map_err(Error)
    }
}
