"""How far a long call has got (``toolhost:tool/progress``).

An MCP client that asked for progress sees each report as a progress
notification; the HTTP API's session stream sees a ``call.progress`` event.
``done`` must grow from one report to the next; a report that does not, and
reports past the host's per-call cap, are dropped. Outside a component (e.g.
in unit tests) reports go to stderr.
"""

from __future__ import annotations

import sys

__all__ = ["report"]


def report(done: float, total: float | None = None, message: str | None = None) -> None:
    """Report that ``done`` of ``total`` (when known) is done, with an optional message."""
    try:
        from wit_world.imports import progress as raw
    except ImportError:
        print(f"[progress] {done}/{total if total is not None else '?'} {message or ''}", file=sys.stderr)
        return
    raw.report(float(done), None if total is None else float(total), None if message is None else str(message))
