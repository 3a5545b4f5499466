"""Prompt templates a tool's component offers to MCP clients.

Decorate a function with ``@prompts.template`` in ``tool.py`` beside the
``@tool`` function. Its keyword parameters are the prompt's arguments (strings;
required unless they have a default); it returns the messages: a ``str``
or a content block (one user message), or a list of ``user(...)`` /
``assistant(...)`` messages, strings and blocks::

    from toolhost import prompts

    @prompts.template(description="Review a pull request for bugs.",
                      arguments={"number": "The pull request's number."})
    def review_pr(number: str) -> str:
        return f"Review pull request #{number} for bugs."

``complete=`` names a function ``(argument, value) -> list[str]`` giving
values that complete an argument. The host lists the prompts when the
component loads and runs ``get`` and ``complete`` with the tool's grants,
read-only, and no workspace.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .text import dedent

__all__ = ["template", "user", "assistant", "Message", "PromptSpec", "registered"]


@dataclass
class Message:
    """One message of a filled-in prompt: ``role`` is ``"user"`` or ``"assistant"``."""

    role: str
    content: Any

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ValueError(f'a message\'s role is "user" or "assistant", not {self.role!r}')


def user(content: Any) -> Message:
    """A message from the user: a ``str`` or a content block."""
    return Message("user", content)


def assistant(content: Any) -> Message:
    """A message from the model: a ``str`` or a content block."""
    return Message("assistant", content)


@dataclass
class PromptSpec:
    """Everything ``@prompts.template`` learned about a prompt function."""

    name: str
    func: Callable[..., Any]
    description: Optional[str]
    title: Optional[str]
    arguments: list = field(default_factory=list)  # (name, description, required)
    complete: Optional[Callable[[str, str], list]] = None

    def messages(self, arguments: dict) -> list:
        """Run the function with ``arguments``; its result as a list of ``Message``."""
        result = self.func(**arguments)
        items = result if isinstance(result, list) else [result]
        return [item if isinstance(item, Message) else user(item) for item in items]


_PROMPTS: dict = {}


def registered() -> list:
    """The prompts registered so far, in the order they were defined."""
    return list(_PROMPTS.values())


def template(
    name: Optional[str] = None,
    *,
    description: Optional[str] = None,
    title: Optional[str] = None,
    arguments: Optional[dict] = None,
    complete: Optional[Callable[[str, str], list]] = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a prompt; ``name`` defaults to the function's, ``description``
    to its docstring, ``arguments`` maps parameter names to descriptions."""

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        described = arguments or {}
        declared = []
        for param in inspect.signature(func).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue  # *args and **kwargs name no argument
            declared.append((
                param.name,
                described.get(param.name),
                param.default is inspect.Parameter.empty,
            ))
        doc = description if description is not None else inspect.getdoc(func)
        spec = PromptSpec(
            name=name or func.__name__,
            func=func,
            description=dedent(doc) if doc else None,
            title=title,
            arguments=declared,
            complete=complete,
        )
        if spec.name in _PROMPTS:
            raise ValueError(f"two @prompts.template functions are named {spec.name!r}")
        _PROMPTS[spec.name] = spec
        return func

    return register
