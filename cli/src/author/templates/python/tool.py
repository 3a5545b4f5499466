"""`{{name}}`: greets someone. Replace this with what the tool does."""

from dataclasses import dataclass
from typing import Annotated

from toolhost import Effect, Field, prompt, tool


@dataclass
class Input:
    """Who to greet."""

    name: Annotated[str, Field("The name of the person to greet.", min_length=1, max_length=100)]


@tool(
    description=prompt("""
        Greet someone by name. Returns the greeting as text; it changes
        nothing, so it is safe to call at any time.
    """),
    effect=Effect.READ,
)
def greet(input: Input) -> str:
    return f"Hello, {input.name}!"
