"""What a tool knows about the call it is running."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any, Optional

__all__ = ["CallContext", "Session", "SessionMode"]


class SessionMode(enum.Enum):
    """Whether a session's calls take effect."""

    LIVE = "live"
    """Calls run for real."""
    DRY_RUN = "dry-run"
    """Reads run; idempotent and write calls are stubbed (they never reach the tool)."""


@dataclass
class Session:
    """The session a call belongs to."""

    id: str = ""
    channel: Optional[str] = None
    mode: SessionMode = SessionMode.LIVE
    auth: Any = None
    """The session owner's auth (parsed JSON), when known."""


@dataclass
class CallContext:
    """What a tool knows about the call it is running.

    The default is a first attempt in a live session, handy for testing a
    tool function natively.
    """

    call_id: str = ""
    """Unique per call; matches the trace's events."""
    attempt: int = 1
    """1 on the first attempt; retries run in fresh instances with 2, 3."""
    session: Session = field(default_factory=Session)
    approved_by: Any = None
    """Auth (parsed JSON) of whoever approved the call; None when it needed no approval."""
    as_of: Optional[str] = None
    """The session's frozen instant (RFC 3339), when it has one."""
    workspace_dir: Optional[str] = None
    """The session's workspace directory as the tool sees it (``/workspace``); None when
    the tool is granted no workspace."""
    state_root: Optional[str] = None
    """The host's durable state directory, shared by every session (``/state``); None
    unless the tool is granted ``state``. Read-only in a read call."""

    def send(self, channel: str, message: str, **options: Any) -> Any:
        """Start or resume a session on ``channel`` and append ``message`` (the SDK
        page's ``ctx.send``); see :func:`toolhost.sessions.send` for the options."""
        from . import sessions

        return sessions.send(channel, message, **options)

    def get_session(self, channel: str, session_id: str) -> Any:
        """The session ``session_id`` on ``channel`` (``ctx.getSession``); see
        :func:`toolhost.sessions.get_session`."""
        from . import sessions

        return sessions.get_session(channel, session_id)

    @classmethod
    def _from_wit(
        cls, ctx: Any, workspace_dir: Optional[str] = None, state_root: Optional[str] = None
    ) -> "CallContext":
        mode = SessionMode.DRY_RUN if ctx.session.mode.name == "DRY_RUN" else SessionMode.LIVE
        return cls(
            call_id=ctx.call_id,
            attempt=ctx.attempt,
            session=Session(ctx.session.id, ctx.session.channel, mode, _json(ctx.session.auth)),
            approved_by=_json(ctx.approved_by),
            as_of=ctx.as_of,
            workspace_dir=workspace_dir,
            state_root=state_root,
        )


def _json(text: Optional[str]) -> Any:
    """Auth arrives as JSON text; text that is not JSON stays a string."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text
