"""`py_journal`: a journal kept in the host's state root (the Python twin of `journal`).

A call with an ``entry`` appends it, with the session's id; a call without one
reads the latest entries; ``export`` saves the journal as an artifact of the
session. Needs ``state = "write"`` (and ``artifacts = "write"`` to export,
``metrics = true`` to count entries) in the
tool's grant (a read call gets ``/state`` read-only whatever it is granted).

Build: toolhost build plugins/python/py_journal (componentize-py 0.25.1 on PATH).
"""

import time
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated, Optional

from toolhost import CallContext, Effect, Failed, Field, artifacts, log, metrics, prompt, tool

LATEST = 20


@dataclass
class Input:
    """What to add, if anything."""

    entry: Annotated[Optional[str], Field("A line to append; without one the call only reads.", min_length=1, max_length=1000)] = None
    export: Annotated[bool, "Save the journal as the session's artifact `journal.txt`."] = False


@tool(
    description=prompt("""
        Append an entry to the host's journal, or read its latest entries
        (without `entry`). The journal is shared by every session; each
        entry records the session that wrote it. With `export`, the journal
        is also saved as the session's artifact `journal.txt`.
    """),
    effect=lambda input: Effect.READ if input.entry is None and not input.export else Effect.WRITE,
)
def journal(input: Input, ctx: CallContext) -> dict:
    if ctx.state_root is None:
        raise Failed('no state root: grant this tool `state = "write"`')
    path = PurePosixPath(ctx.state_root, "journal.txt")
    if input.entry is not None:
        started = time.monotonic()
        line = f"{ctx.session.id}\t{input.entry.replace(chr(10), ' ').replace(chr(9), ' ')}\n"
        try:
            with open(path, "a", encoding="utf-8") as file:
                file.write(line)
        except OSError as err:
            raise Failed(f"cannot append to {path}: {err.strerror or err}") from None
        _count_entry(ctx, time.monotonic() - started)
    try:
        with open(path, encoding="utf-8") as file:
            lines = file.read().splitlines()
    except FileNotFoundError:
        lines = []
    except OSError as err:
        raise Failed(f"cannot read {path}: {err.strerror or err}") from None
    latest = []
    for line in lines[-LATEST:]:
        session, _, text = line.partition("\t")
        latest.append({"session": session, "text": text})
    artifact = None
    if input.export:
        artifact = artifacts.save_file("journal.txt", str(path), "text/plain", tags=["journal"]).uri
    return {"stateRoot": ctx.state_root, "workspaceDir": ctx.workspace_dir, "count": len(lines),
            "latest": latest, "artifact": artifact}


def _count_entry(ctx: CallContext, seconds: float) -> None:
    """Count an entry by the session's channel, and how long its append took
    (``metrics = true``); the entry stands without them."""
    try:
        metrics.counter("journal_entries").add(1, {"channel": ctx.session.channel or "none"})
        metrics.histogram("journal_append_seconds").record(seconds)
    except metrics.MetricError as err:
        log.warn(f"cannot count the entry: {err}")
