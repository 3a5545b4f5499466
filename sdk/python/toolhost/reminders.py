"""Reminders (``toolhost:tool/reminders``): the SDK page's ``ctx.host.reminders``.

A reminder comes back to this call's session later, with a message (a
``user.message`` event) or a call of a tool (through the pipeline, with that tool's
permission policy, recorded with origin ``reminder(<this call's id>)``). The operator
grants them: ``reminders = { tools = ["x"] }`` in the tool's ``[tools.<name>]``
schedules messages and calls of ``x``. A read call may list them but not schedule or
cancel. Only a session the server keeps takes reminders.

    from datetime import timedelta
    from toolhost import reminders

    soon = reminders.message(timedelta(hours=1), "Check the deploy")
    reminders.call("2027-01-01T09:00:00Z", "report", {})
    reminders.cancel(soon.id)

``when`` is a :class:`datetime.timedelta` (a delay) or an RFC 3339 instant (a ``str``
with a timezone, or a timezone-aware :class:`datetime.datetime`). The host's refusal
raises :class:`ReminderError` with its reason. Outside a component (e.g. in unit
tests) each function raises :class:`ReminderError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, List, Optional, Union

from . import _host

__all__ = ["Reminder", "ReminderError", "message", "call", "list_all", "cancel"]

When = Union[timedelta, datetime, str]


class ReminderError(Exception):
    """Why the host did not schedule, list or cancel: not granted, a read call, a tool
    the grant does not list, an input its schema refuses, a session that ends with the
    call, too far ahead, or too many pending."""


@dataclass
class Reminder:
    """A pending reminder."""

    id: str
    session: str
    fire_at: str
    """When it fires (RFC 3339)."""
    message: Optional[str] = None
    """The message it appends, for a message reminder."""
    tool: Optional[str] = None
    """The tool it calls, for a call reminder."""
    input: Any = None
    """The input of its call."""
    scheduled_by: str = ""
    """The call that scheduled it."""

    @classmethod
    def _from_wit(cls, raw: Any, types: Any) -> "Reminder":
        action = raw.action
        if isinstance(action, types.ReminderAction_Message):
            return cls(raw.id, raw.session, raw.fire_at, message=action.value,
                       scheduled_by=raw.scheduled_by)
        return cls(raw.id, raw.session, raw.fire_at, tool=action.value.tool,
                   input=json.loads(action.value.input), scheduled_by=raw.scheduled_by)


def _raw() -> Any:
    return _host.bindings("reminders", ReminderError, "no session outside a component")


def _call(operation: Any, *args: Any) -> Any:
    return _host.call(ReminderError, operation, *args)


def _when(raw: Any, when: When) -> Any:
    if isinstance(when, timedelta):
        return raw.ReminderTime_AfterMs(max(0, int(when.total_seconds() * 1000)))
    if isinstance(when, datetime):
        if when.tzinfo is None:
            raise ReminderError("a datetime for a reminder needs a timezone")
        return raw.ReminderTime_At(when.isoformat())
    return raw.ReminderTime_At(str(when))


def message(when: When, text: str) -> Reminder:
    """Schedule ``text`` to be appended to this call's session at ``when``."""
    raw = _raw()
    kept = _call(raw.schedule, _when(raw, when), raw.ReminderAction_Message(str(text)))
    return Reminder._from_wit(kept, raw)


def call(when: When, tool: str, input: Any) -> Reminder:
    """Schedule a call of ``tool`` with ``input`` (a dict) in this call's session at
    ``when``."""
    raw = _raw()
    action = raw.ReminderAction_Call(raw.ReminderCall(tool, json.dumps(input)))
    return Reminder._from_wit(_call(raw.schedule, _when(raw, when), action), raw)


def list_all() -> List[Reminder]:
    """The session's pending reminders, soonest first."""
    raw = _raw()
    return [Reminder._from_wit(r, raw) for r in _call(raw.list_reminders)]


def cancel(reminder_id: str) -> bool:
    """Cancel the session's pending reminder ``reminder_id``; False when there is none
    by that id."""
    return bool(_call(_raw().cancel_reminder, reminder_id))
