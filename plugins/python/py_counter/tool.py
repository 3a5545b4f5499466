"""`py_counter`: a named counter kept in the `default` key-value bucket (the Python twin of `counter`).

Build: toolhost build plugins/python/py_counter (componentize-py 0.25.1 on PATH).
"""

from dataclasses import dataclass
from typing import Annotated

from toolhost import Effect, Field, kv, prompt, tool


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
    return {"name": input.name, "value": value}
