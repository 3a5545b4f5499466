"""Sessions on channels (``toolhost:tool/sessions``): the SDK page's ``ctx.send`` and
``ctx.get_session``.

The operator grants channels: ``sessions = ["support", "ops-*"]`` in the tool's
``[tools.<name>]``. A read call may look sessions up but not send. A send appends a
``user.message`` event to the session (started or resumed); the application reading
the session's event stream acts on it. Sessions are kept by ``toolhost serve`` and
``toolhost mcp``: a one-shot ``tool call`` has none.

    from toolhost import sessions

    sent = sessions.send("support", "The build is green", key="ticket-42")
    print(sent.session.continuation_token, sent.event_id)

The host's refusal raises :class:`SessionError` with its reason (uncaught, it fails
the call). Outside a component (e.g. in unit tests) there are no sessions: each
function raises :class:`SessionError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from . import _host

__all__ = ["SessionInfo", "Sent", "SessionError", "send", "get_session"]


class SessionError(Exception):
    """Why the host did not look up or send: not granted for the channel, a read call,
    no sessions on this host, another principal's session, a message too large, or
    too many sends."""


@dataclass
class SessionInfo:
    """A session on a channel."""

    id: str
    channel: str
    key: str
    continuation_token: str
    """``<channel>:<key>``, what a client passes as ``continuationToken``."""
    mode: str
    """``live`` or ``dry-run``."""
    created_at: str
    last_active: str

    @classmethod
    def _from_wit(cls, raw: Any) -> "SessionInfo":
        return cls(raw.id, raw.channel, raw.key, raw.continuation_token, raw.mode,
                   raw.created_at, raw.last_active)


@dataclass
class Sent:
    """What a send did."""

    session: SessionInfo
    started: bool
    """Whether the send started the session."""
    event_id: int
    """The ``user.message`` event's id in the session's event stream."""


def _raw() -> Any:
    return _host.bindings("sessions", SessionError, "no sessions outside a component")


def _call(operation: Any, *args: Any) -> Any:
    return _host.call(SessionError, operation, *args)


def send(channel: str, message: str, *, session_id: Optional[str] = None,
         key: Optional[str] = None, auth: Any = None) -> Sent:
    """Start or resume a session on ``channel`` and append ``message`` to it.

    ``session_id`` resumes that session, ``key`` starts or resumes ``<channel>:<key>``,
    neither starts a new session. ``auth`` (a dict) is the principal to send as; this
    call's session's principal when None, another only when the tool's ``send_as``
    grant names it."""
    raw = _raw()
    options = raw.SendOptions(session_id, key, None if auth is None else json.dumps(auth))
    sent = _call(raw.send, channel, str(message), options)
    return Sent(SessionInfo._from_wit(sent.session), sent.started, sent.event_id)


def get_session(channel: str, session_id: str) -> Optional[SessionInfo]:
    """The session ``session_id`` on ``channel``, if there is one this call's principal
    may use."""
    found = _call(_raw().get_session, channel, session_id)
    return None if found is None else SessionInfo._from_wit(found)
