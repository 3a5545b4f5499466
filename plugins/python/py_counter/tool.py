"""`py_counter`: a named counter kept in the `default` key-value bucket (the Python twin of `counter`).

Each counter is also a resource for MCP clients, `py-counter://{name}` (its
value as text); a call tells the clients subscribed to the counter's address
that it changed.

Build: toolhost build plugins/python/py_counter (componentize-py 0.25.1 on PATH).
"""

import urllib.parse
from dataclasses import dataclass
from typing import Annotated

from toolhost import Effect, Field, kv, log, prompt, resources, tool


@dataclass
class Input:
    """Which counter to bump, and by how much."""

    name: Annotated[str, Field("The counter's name (its key in the bucket).", min_length=1, max_length=256)]
    by: Annotated[int, "How much to add; negative to subtract."] = 1


@tool(
    description=prompt("""
        Add to a named counter and return its new value. Counters start at 0
        and are shared by every session of this host.
    """),
    effect=Effect.WRITE,
    dry_run=lambda input: {"name": input.name, "value": None, "dryRun": True},
)
def counter(input: Input, ctx) -> dict:
    value = kv.open("default").increment(input.name, input.by)
    try:
        resources.updated("py-counter://" + urllib.parse.quote(input.name, safe=""))
    except ValueError as err:  # e.g. a name too long for an address; the count stands
        log.warn(f"cannot announce the counter's resource: {err}")
    return {"name": input.name, "value": value}


@resources.template("py-counter://{name}", name="counter", description="A counter's value.",
                    media_type="text/plain")
def counter_value(name: str) -> str:
    value = kv.open("default").get(name)
    if value is None:
        raise resources.NotFound()
    return value.decode("utf-8")
