"""Structured log lines that go into the call's trace (``toolhost:tool/log``).

Outside a component (e.g. in unit tests) lines go to stderr.
"""

from __future__ import annotations

import sys

__all__ = ["log", "debug", "info", "warn", "error"]

_LEVELS = ("debug", "info", "warn", "error")


def log(level: str, message: str) -> None:
    """Add a line at ``level`` (debug, info, warn, error). Lines past the per-call cap are dropped."""
    if level not in _LEVELS:
        raise ValueError(f"unknown log level {level!r}")
    try:
        from wit_world.imports import log as raw
    except ImportError:
        print(f"[{level}] {message}", file=sys.stderr)
        return
    raw.log(raw.Level[level.upper()], str(message))


def debug(message: str) -> None:
    """A fine-detail line."""
    log("debug", message)


def info(message: str) -> None:
    """A normal-operation line."""
    log("info", message)


def warn(message: str) -> None:
    """Something unexpected that the tool handled."""
    log("warn", message)


def error(message: str) -> None:
    """A failure."""
    log("error", message)
