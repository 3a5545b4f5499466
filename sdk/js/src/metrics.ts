/**
 * Custom metrics (`toolhost:tool/metrics`): counters and histograms the
 * tool updates, exported on `serve`'s `/metrics` as `toolhost_tool_<name>`
 * with the tool's name as the `tool` label, and over OTLP when the host has
 * an `otlp_endpoint`.
 *
 * The operator grants them: `metrics = true` in the tool's
 * `[tools.<name>]`. A metric is declared by its first update (its kind and
 * label names are fixed then, host-wide); names are 1-64 characters of
 * a-z, 0-9 and `_`, at most 4 labels. Don't end a counter's name in
 * `_total`: Prometheus adds it. The host's refusal throws `MetricError`.
 *
 * ```ts
 * metrics.counter("jobs_done").add(1, { kind: "build" });
 * metrics.histogram("build_seconds").record(0.42);
 * ```
 */
import { engine } from "toolhost/engine";
import { messageOf, witPayload } from "./errors.ts";

/** Why the host refused an update: not granted, a bad name, label or value, or a bound reached. */
export class MetricError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MetricError";
  }
}

type Labels = Record<string, string>;

function update(op: "counterAdd" | "histogramRecord", name: string, value: number, labels: Labels): void {
  const pairs: Array<[string, string]> = Object.entries(labels).map(([k, v]) => [k, String(v)]);
  try {
    engine.metrics[op](name, value, pairs);
  } catch (err) {
    const payload = witPayload(err);
    throw new MetricError(typeof payload === "string" ? payload : messageOf(err));
  }
}

/** A counter: a total that only grows. */
export class Counter {
  constructor(readonly name: string) {}
  /** Add `value` (finite, at least 0; default 1) to the series of `labels`. */
  add(value = 1, labels: Labels = {}): void {
    update("counterAdd", this.name, value, labels);
  }
}

/** A histogram: a distribution of recorded values (buckets 0.005 to 10: record seconds). */
export class Histogram {
  constructor(readonly name: string) {}
  /** Record `value` (finite) in the series of `labels`. */
  record(value: number, labels: Labels = {}): void {
    update("histogramRecord", this.name, value, labels);
  }
}

/** Counters and histograms: `metrics.counter(name).add(…)`, `metrics.histogram(name).record(…)`. */
export const metrics = {
  counter: (name: string) => new Counter(name),
  histogram: (name: string) => new Histogram(name),
  MetricError,
};
