"""Custom metrics (``toolhost:tool/metrics``): counters and histograms the tool updates.

Exported on ``serve``'s ``/metrics`` as ``toolhost_tool_<name>`` with the tool's
name as the ``tool`` label, and over OTLP when the host has an ``otlp_endpoint``.
The operator grants them: ``metrics = true`` in the tool's ``[tools.<name>]``. A
metric is declared by its first update (its kind and label names are fixed then,
host-wide); names are 1-64 characters of a-z, 0-9 and ``_``, at most 4 labels.
Don't end a counter's name in ``_total``: Prometheus adds it.

    from toolhost import metrics

    metrics.counter("jobs_done").add(1, {"kind": "build"})
    metrics.histogram("build_seconds").record(0.42)

The host's refusal raises :class:`MetricError` with its reason. Outside a
component (e.g. in unit tests) updates go to stderr.
"""

from __future__ import annotations

import sys
from typing import Dict, List, Optional, Tuple

__all__ = ["Counter", "Histogram", "MetricError", "counter", "histogram"]


class MetricError(Exception):
    """Why the host refused an update: not granted, a bad name, label or value, or a bound reached."""


def _labels(labels: Optional[Dict[str, str]]) -> List[Tuple[str, str]]:
    return [(str(k), str(v)) for k, v in (labels or {}).items()]


def _update(operation: str, name: str, value: float, labels: Optional[Dict[str, str]]) -> None:
    try:
        from wit_world.imports import metrics as raw
    except ImportError:
        print(f"[metric] {operation} {name} {value} {labels or {}}", file=sys.stderr)
        return
    from componentize_py_types import Err

    try:
        getattr(raw, operation)(str(name), float(value), _labels(labels))
    except Err as err:
        raise MetricError(str(err.value)) from None


class Counter:
    """A counter: a total that only grows."""

    def __init__(self, name: str) -> None:
        self.name = name

    def add(self, value: float = 1, labels: Optional[Dict[str, str]] = None) -> None:
        """Add ``value`` (finite, at least 0) to the series of ``labels``."""
        _update("counter_add", self.name, value, labels)


class Histogram:
    """A histogram: a distribution of recorded values (buckets 0.005 to 10: record seconds)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def record(self, value: float, labels: Optional[Dict[str, str]] = None) -> None:
        """Record ``value`` (finite) in the series of ``labels``."""
        _update("histogram_record", self.name, value, labels)


def counter(name: str) -> Counter:
    """The counter ``name``."""
    return Counter(name)


def histogram(name: str) -> Histogram:
    """The histogram ``name``."""
    return Histogram(name)


