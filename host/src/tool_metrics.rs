//! Custom metrics: the counters and histograms tools update
//! (`toolhost:tool/metrics`), kept host-wide for `/metrics` and OTLP.
//!
//! A metric is declared by its first update: its kind (counter or
//! histogram) and its label names are fixed then, host-wide, whichever tool
//! declared it; every series carries the updating tool's name as the
//! `tool` label. Everything is bounded: metric and label names, label
//! values, label names per metric, metrics per tool and host-wide, and
//! series per metric, so a tool cannot make the host keep more than a few
//! megabytes however it labels.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// The most metrics one tool may declare.
pub const MAX_METRICS_PER_TOOL: usize = 32;
/// The most metrics the host keeps.
pub const MAX_METRICS: usize = 256;
/// The most label names a metric may have (besides `tool`).
pub const MAX_LABELS: usize = 4;
/// The most series (label value sets, tools included) a metric may have.
pub const MAX_SERIES: usize = 256;
/// The longest label value, in characters.
pub const MAX_LABEL_VALUE_CHARS: usize = 128;
/// The longest metric or label name, in bytes.
pub const MAX_NAME_BYTES: usize = 64;
/// A histogram's bucket bounds (Prometheus' defaults, in the unit the tool
/// records in), `+Inf` beyond.
pub const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// What a metric counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// A total that only grows.
    Counter,
    /// A distribution of recorded values.
    Histogram,
}

impl MetricKind {
    fn name(self) -> &'static str {
        match self {
            Self::Counter => "counter",
            Self::Histogram => "histogram",
        }
    }
}

/// One series' value.
#[derive(Debug, Clone, PartialEq)]
pub enum SeriesValue {
    /// A counter's total.
    Counter(f64),
    /// A histogram's counts per bucket (cumulative is the exporter's job),
    /// sum and count.
    Histogram {
        /// How many values fell at or below each of [`BUCKETS`], then above all.
        buckets: [u64; BUCKETS.len() + 1],
        /// The values' sum.
        sum: f64,
        /// How many values.
        count: u64,
    },
}

/// A metric as exporters see it.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSnapshot {
    /// Its name, as tools gave it.
    pub name: String,
    /// What it counts.
    pub kind: MetricKind,
    /// The tool that declared it.
    pub declared_by: String,
    /// Each series: its labels (`tool` first, then the metric's label
    /// names in order) and its value.
    pub series: Vec<(Vec<(String, String)>, SeriesValue)>,
}

struct Metric {
    kind: MetricKind,
    label_names: Vec<String>,
    declared_by: String,
    /// By tool, then label values in `label_names`' order.
    series: BTreeMap<(String, Vec<String>), SeriesValue>,
}

/// Where each accepted update also goes: an exporter that keeps its own
/// instruments (OpenTelemetry). Called after the update, outside any lock.
pub trait MetricSink: Send + Sync {
    /// `value` was added to counter `name`; `labels` start with `tool`.
    fn counter_add(&self, name: &str, value: f64, labels: &[(String, String)]);
    /// `value` was recorded in histogram `name`; `labels` start with `tool`.
    fn histogram_record(&self, name: &str, value: f64, labels: &[(String, String)]);
}

/// The host's custom metrics.
#[derive(Default)]
pub struct ToolMetrics {
    metrics: Mutex<BTreeMap<String, Metric>>,
    sink: std::sync::OnceLock<std::sync::Arc<dyn MetricSink>>,
}

impl std::fmt::Debug for ToolMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolMetrics").finish_non_exhaustive()
    }
}

fn check_name(what: &str, name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let ok = name.len() <= MAX_NAME_BYTES
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with("__");
    ok.then_some(()).ok_or_else(|| {
        format!(
            "{what} {} is invalid: use 1-{MAX_NAME_BYTES} characters of a-z, 0-9 and `_`, \
             not starting with a digit or `__`",
            crate::shown::quoted(name)
        )
    })
}

impl ToolMetrics {
    /// Send every update from now on to `sink` as well; the first sink set
    /// stays.
    pub fn set_sink(&self, sink: std::sync::Arc<dyn MetricSink>) {
        let _ = self.sink.set(sink);
    }

    fn with_tool(tool: &str, labels: &[(String, String)]) -> Vec<(String, String)> {
        std::iter::once(("tool".to_string(), tool.to_string()))
            .chain(labels.iter().cloned())
            .collect()
    }

    /// Add `value` to counter `name` for `tool`, with `labels`.
    pub fn counter_add(
        &self,
        tool: &str,
        name: &str,
        value: f64,
        labels: &[(String, String)],
    ) -> Result<(), String> {
        if !value.is_finite() || value < 0.0 {
            return Err(format!(
                "a counter only grows: {value} is not a finite number of at least 0"
            ));
        }
        self.update(tool, name, MetricKind::Counter, labels, |series| {
            if let SeriesValue::Counter(total) = series {
                *total += value;
            }
        })?;
        if let Some(sink) = self.sink.get() {
            sink.counter_add(name, value, &Self::with_tool(tool, labels));
        }
        Ok(())
    }

    /// Record `value` in histogram `name` for `tool`, with `labels`.
    pub fn histogram_record(
        &self,
        tool: &str,
        name: &str,
        value: f64,
        labels: &[(String, String)],
    ) -> Result<(), String> {
        if !value.is_finite() {
            return Err(format!("{value} is not a finite number"));
        }
        self.update(tool, name, MetricKind::Histogram, labels, |series| {
            if let SeriesValue::Histogram {
                buckets,
                sum,
                count,
            } = series
            {
                let at = BUCKETS
                    .iter()
                    .position(|bound| value <= *bound)
                    .unwrap_or(BUCKETS.len());
                buckets[at] += 1;
                *sum += value;
                *count += 1;
            }
        })?;
        if let Some(sink) = self.sink.get() {
            sink.histogram_record(name, value, &Self::with_tool(tool, labels));
        }
        Ok(())
    }

    fn update(
        &self,
        tool: &str,
        name: &str,
        kind: MetricKind,
        labels: &[(String, String)],
        apply: impl FnOnce(&mut SeriesValue),
    ) -> Result<(), String> {
        check_name("metric name", name)?;
        if labels.len() > MAX_LABELS {
            return Err(format!(
                "{} labels: a metric has at most {MAX_LABELS} (besides `tool`)",
                labels.len()
            ));
        }
        let mut sorted: Vec<&(String, String)> = labels.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        for pair in sorted.windows(2) {
            if pair[0].0 == pair[1].0 {
                return Err(format!(
                    "label {} is given twice",
                    crate::shown::quoted(&pair[0].0)
                ));
            }
        }
        for (label, value) in &sorted {
            check_name("label name", label)?;
            if label == "tool" {
                return Err("the label `tool` is the host's: it names the tool".into());
            }
            if value.chars().count() > MAX_LABEL_VALUE_CHARS || value.chars().any(char::is_control)
            {
                return Err(format!(
                    "the value of label {label:?} must be at most {MAX_LABEL_VALUE_CHARS} \
                     characters without control characters"
                ));
            }
        }
        let names: Vec<String> = sorted.iter().map(|(k, _)| k.clone()).collect();
        let values: Vec<String> = sorted.iter().map(|(_, v)| v.clone()).collect();
        let mut metrics = self.metrics.lock().unwrap_or_else(PoisonError::into_inner);
        if !metrics.contains_key(name) {
            let declared = metrics.values().filter(|m| m.declared_by == tool).count();
            if declared >= MAX_METRICS_PER_TOOL {
                return Err(format!(
                    "`{tool}` declared {MAX_METRICS_PER_TOOL} metrics already, the most a tool may"
                ));
            }
            if metrics.len() >= MAX_METRICS {
                return Err(format!(
                    "the host keeps {MAX_METRICS} metrics already, the most it may"
                ));
            }
            metrics.insert(
                name.to_string(),
                Metric {
                    kind,
                    label_names: names.clone(),
                    declared_by: tool.to_string(),
                    series: BTreeMap::new(),
                },
            );
        }
        let metric = metrics
            .get_mut(name)
            .ok_or_else(|| format!("metric {name:?} vanished"))?;
        if metric.kind != kind || metric.label_names != names {
            return Err(format!(
                "metric {name:?} is a {} with labels [{}] (declared by `{}`): it cannot be \
                 updated as a {} with labels [{}]",
                metric.kind.name(),
                metric.label_names.join(", "),
                metric.declared_by,
                kind.name(),
                names.join(", ")
            ));
        }
        let key = (tool.to_string(), values);
        if !metric.series.contains_key(&key) && metric.series.len() >= MAX_SERIES {
            return Err(format!(
                "metric {name:?} has {MAX_SERIES} label sets already, the most it may: keep \
                 label values to a few known ones"
            ));
        }
        let series = metric.series.entry(key).or_insert_with(|| match kind {
            MetricKind::Counter => SeriesValue::Counter(0.0),
            MetricKind::Histogram => SeriesValue::Histogram {
                buckets: [0; BUCKETS.len() + 1],
                sum: 0.0,
                count: 0,
            },
        });
        apply(series);
        Ok(())
    }

    /// Every metric, by name, each series with its labels.
    pub fn snapshot(&self) -> Vec<MetricSnapshot> {
        let metrics = self.metrics.lock().unwrap_or_else(PoisonError::into_inner);
        metrics
            .iter()
            .map(|(name, metric)| MetricSnapshot {
                name: name.clone(),
                kind: metric.kind,
                declared_by: metric.declared_by.clone(),
                series: metric
                    .series
                    .iter()
                    .map(|((tool, values), value)| {
                        let labels = std::iter::once(("tool".to_string(), tool.clone()))
                            .chain(
                                metric
                                    .label_names
                                    .iter()
                                    .cloned()
                                    .zip(values.iter().cloned()),
                            )
                            .collect();
                        (labels, value.clone())
                    })
                    .collect(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn counters_and_histograms_keep_their_series_by_tool_and_labels() {
        let metrics = ToolMetrics::default();
        let kind = labels(&[("kind", "a")]);
        metrics.counter_add("t1", "jobs", 1.0, &kind).unwrap();
        metrics.counter_add("t1", "jobs", 2.5, &kind).unwrap();
        metrics.counter_add("t2", "jobs", 1.0, &kind).unwrap();
        metrics
            .histogram_record("t1", "seconds", 0.007, &[])
            .unwrap();
        metrics
            .histogram_record("t1", "seconds", 20.0, &[])
            .unwrap();
        let snapshot = metrics.snapshot();
        assert_eq!(snapshot[0].name, "jobs");
        assert_eq!(snapshot[0].declared_by, "t1");
        assert_eq!(
            snapshot[0].series,
            [
                (
                    labels(&[("tool", "t1"), ("kind", "a")]),
                    SeriesValue::Counter(3.5)
                ),
                (
                    labels(&[("tool", "t2"), ("kind", "a")]),
                    SeriesValue::Counter(1.0)
                ),
            ]
        );
        let SeriesValue::Histogram {
            buckets,
            sum,
            count,
        } = &snapshot[1].series[0].1
        else {
            panic!("{snapshot:?}")
        };
        assert_eq!((buckets[1], buckets[BUCKETS.len()], *count), (1, 1, 2));
        assert!((sum - 20.007).abs() < 1e-9);
    }

    #[test]
    fn a_metric_keeps_the_kind_and_labels_it_was_declared_with() {
        let metrics = ToolMetrics::default();
        metrics
            .counter_add("t1", "jobs", 1.0, &labels(&[("kind", "a")]))
            .unwrap();
        let kind = metrics.histogram_record("t2", "jobs", 1.0, &labels(&[("kind", "a")]));
        assert!(
            kind.unwrap_err()
                .contains("is a counter with labels [kind] (declared by `t1`)")
        );
        let other = metrics.counter_add("t1", "jobs", 1.0, &labels(&[("colour", "red")]));
        assert!(other.unwrap_err().contains("with labels [colour]"));
    }

    #[test]
    fn names_values_and_counts_are_bounded() {
        let metrics = ToolMetrics::default();
        for (name, value, pairs, expected) in [
            ("Jobs", 1.0, vec![], "metric name \"Jobs\" is invalid"),
            ("__x", 1.0, vec![], "is invalid"),
            ("jobs", -1.0, vec![], "a counter only grows"),
            ("jobs", f64::NAN, vec![], "a counter only grows"),
            (
                "jobs",
                1.0,
                vec![("tool", "x")],
                "the label `tool` is the host's",
            ),
            ("jobs", 1.0, vec![("a", "1"), ("a", "2")], "given twice"),
            (
                "jobs",
                1.0,
                vec![("a", "1"), ("b", "1"), ("c", "1"), ("d", "1"), ("e", "1")],
                "at most 4",
            ),
        ] {
            let error = metrics
                .counter_add("t", name, value, &labels(&pairs))
                .unwrap_err();
            assert!(error.contains(expected), "{name}: {error}");
        }
        let long = "x".repeat(MAX_LABEL_VALUE_CHARS + 1);
        let error = metrics
            .counter_add("t", "jobs", 1.0, &labels(&[("a", &long)]))
            .unwrap_err();
        assert!(error.contains("at most 128 characters"), "{error}");

        for i in 0..MAX_SERIES {
            let value = i.to_string();
            metrics
                .counter_add("t", "series", 1.0, &labels(&[("id", &value)]))
                .unwrap();
        }
        let error = metrics
            .counter_add("t", "series", 1.0, &labels(&[("id", "more")]))
            .unwrap_err();
        assert!(error.contains("256 label sets already"), "{error}");
        // An existing series still counts.
        metrics
            .counter_add("t", "series", 1.0, &labels(&[("id", "0")]))
            .unwrap();

        for i in 1..MAX_METRICS_PER_TOOL {
            metrics
                .counter_add("t", &format!("m{i}"), 1.0, &[])
                .unwrap();
        }
        let error = metrics.counter_add("t", "one_more", 1.0, &[]).unwrap_err();
        assert!(error.contains("declared 32 metrics already"), "{error}");
        metrics.counter_add("other", "one_more", 1.0, &[]).unwrap();
    }
}
