"""Write toolhost tools in Python.

A tool is one decorated function in a module named ``tool`` (``tool.py``)::

    from dataclasses import dataclass
    from typing import Annotated
    from toolhost import tool, Effect, Field, kv

    @dataclass
    class Input:
        name: Annotated[str, "The counter's name.", Field(min_length=1, max_length=256)]
        by: Annotated[int, "How much to add."] = 1

    @tool(description="Add to a named counter. Returns its new value.", effect=Effect.WRITE)
    def counter(input: Input, ctx) -> dict:
        return {"name": input.name, "value": kv.open("default").increment(input.name, input.by)}

Build it into a component with ``toolhost build DIR`` (it runs componentize-py
0.25 with this package on the path and ``toolhost.component`` as the entry).

Sandboxed resources: files under ``/workspace`` with ``open``/``pathlib``,
key-value buckets with :mod:`toolhost.kv`, outgoing HTTP with
:mod:`toolhost.http`, trace lines with :mod:`toolhost.log`, progress reports
with :mod:`toolhost.progress`, questions to the user, the client's model or
the client (its roots) with :mod:`toolhost.ask`. Anything not granted raises
an exception (never traps). Prompts for MCP clients: :mod:`toolhost.prompts`;
resources for them (and announcing that one changed): :mod:`toolhost.resources`.
"""

from . import (
    artifacts, ask, http, kv, log, metrics, progress, prompts, reminders, resources, sessions,
)
from .ask import AskError
from .context import CallContext, Session, SessionMode
from .decorator import Effect, tool
from .errors import Failed, InvalidInput, ToolError, Transient
from .output import Audio, Document, Image, Json, Output, ResourceLink, SearchResult, Text
from .schema import Field, schema_of
from .text import dedent, prompt

__all__ = [
    "tool", "Effect", "Field", "schema_of", "prompt", "dedent",
    "CallContext", "Session", "SessionMode",
    "ToolError", "InvalidInput", "Transient", "Failed", "AskError",
    "Output", "Text", "Json", "Image", "Audio", "Document", "SearchResult", "ResourceLink",
    "kv", "http", "log", "progress", "prompts", "resources", "ask", "artifacts", "metrics",
    "sessions", "reminders",
]
