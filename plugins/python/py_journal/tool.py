"""`py_journal`: a journal kept in the host's state root (the Python twin of `journal`).

A call with an ``entry`` appends it, with the session's id; a call without one
reads the latest entries; ``export`` saves the journal as an artifact of the
session; ``notify`` also sends the entry to a session on the ``journal`` channel;
``later_ms`` appends it later, through a reminder that calls this tool. Needs
``state = "write"`` (and ``artifacts = "write"`` to export, ``metrics = true`` to
count entries, ``sessions = ["journal"]`` to notify, ``reminders = { tools =
["py_journal"] }`` for ``later_ms``) in the tool's grant (a read call gets ``/state``
read-only whatever it is granted).

Build: toolhost build plugins/python/py_journal (componentize-py 0.25.1 on PATH).
"""

import time
from datetime import timedelta
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated, Optional

from toolhost import (
    CallContext, Effect, Failed, Field, InvalidInput, artifacts, log, metrics, prompt, reminders, tool,
)

LATEST = 20


@dataclass
class Input:
    """What to add, if anything."""

    entry: Annotated[Optional[str], Field("A line to append; without one the call only reads.", min_length=1, max_length=1000)] = None
    export: Annotated[bool, "Save the journal as the session's artifact `journal.txt`."] = False
    notify: Annotated[Optional[str], Field(
        "Also send the entry to the session with this key on the `journal` channel (started if "
        "there is none), as a `user.message` event.", min_length=1, max_length=128)] = None
    later_ms: Annotated[Optional[int], Field(
        "Append the entry later instead: a reminder calls this tool with it after this many "
        "milliseconds (in a session the server keeps).", ge=0, le=86_400_000)] = None


@tool(
    description=prompt("""
        Append an entry to the host's journal, or read its latest entries
        (without `entry`). The journal is shared by every session; each
        entry records the session that wrote it. With `export`, the journal
        is also saved as the session's artifact `journal.txt`. With
        `notify`, the entry is also sent to that session of the `journal`
        channel. With `later_ms`, the entry is appended that much later (by
        a reminder) instead of now.
    """),
    effect=lambda input: (
        Effect.READ if input.entry is None and not input.export and input.notify is None else Effect.WRITE
    ),
)
def journal(input: Input, ctx: CallContext) -> dict:
    if input.entry is None:
        for key in ("notify", "later_ms"):
            if getattr(input, key) is not None:
                raise InvalidInput(f"`{key}` is about the entry: give an `entry` too")
    if input.later_ms is not None and input.entry is not None:
        now = {"entry": input.entry}
        if input.notify is not None:
            now["notify"] = input.notify
        reminder = reminders.call(timedelta(milliseconds=input.later_ms), "py_journal", now)
        return {"reminder": {"id": reminder.id, "fireAt": reminder.fire_at}}
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
    notified = None
    if input.notify is not None and input.entry is not None:
        sent = ctx.send("journal", input.entry, key=input.notify)
        notified = {"sessionId": sent.session.id, "continuationToken": sent.session.continuation_token,
                    "started": sent.started, "eventId": sent.event_id}
    return {"stateRoot": ctx.state_root, "workspaceDir": ctx.workspace_dir, "count": len(lines),
            "latest": latest, "artifact": artifact, "notified": notified}


def _count_entry(ctx: CallContext, seconds: float) -> None:
    """Count an entry by the session's channel, and how long its append took
    (``metrics = true``); the entry stands without them."""
    try:
        metrics.counter("journal_entries").add(1, {"channel": ctx.session.channel or "none"})
        metrics.histogram("journal_append_seconds").record(seconds)
    except metrics.MetricError as err:
        log.warn(f"cannot count the entry: {err}")
