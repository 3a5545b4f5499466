"""Why a call failed: raise one of these from a tool."""

from __future__ import annotations

__all__ = ["ToolError", "InvalidInput", "Transient", "Failed"]


class ToolError(Exception):
    """Base of the errors a tool raises to fail a call. The message reaches the caller."""

    kind = "failed"

    def __init__(self, message: object) -> None:
        super().__init__(str(message))
        self.message = str(message)


class InvalidInput(ToolError):
    """The input was well-formed but unusable; the message says why."""

    kind = "invalid-input"


class Transient(ToolError):
    """A passing failure: read and idempotent calls are tried again (three attempts in all)."""

    kind = "transient"


class Failed(ToolError):
    """Any other failure; not retried."""

    kind = "failed"
