"""The ``@tool`` decorator and the tool's specification."""

from __future__ import annotations

import enum
import inspect
import json
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from .context import CallContext
from .errors import Failed, InvalidInput, ToolError
from .output import Output, to_output
from .schema import convert, schema_of
from .text import dedent

__all__ = ["Effect", "tool", "ToolSpec", "registered"]


class Effect(enum.Enum):
    """What a call does to the world: decides dry-run stubbing, retries and sandbox access."""

    READ = "read"
    """Changes nothing. Runs in dry-run sessions; read-only access; retried when transient."""
    IDEMPOTENT = "idempotent"
    """Repeating the same input changes nothing more. Stubbed in dry-run; retried when transient."""
    WRITE = "write"
    """Changes something. Stubbed in dry-run sessions; runs at most once."""


@dataclass
class ToolSpec:
    """Everything ``@tool`` learned about a tool function."""

    func: Callable[..., Any]
    description: str
    input_type: Any
    input_schema: Optional[dict]
    output_schema: Optional[dict] = None
    effect: Union[Effect, Callable[[Any], Effect]] = Effect.WRITE
    dry_run: Any = None
    has_dry_run: bool = False
    time_args: list = field(default_factory=list)
    wants_input: bool = True
    wants_ctx: bool = True

    # -- what the export glue calls ------------------------------------------

    def parse(self, text: str) -> Any:
        """Decode the call's JSON input into the input type (empty input is ``{}``)."""
        try:
            value = json.loads(text) if text.strip() else {}
            return convert(value, self.input_type) if self.input_type is not None else value
        except ToolError:
            raise
        except Exception as err:  # the host validated it; this is a schema mismatch
            raise InvalidInput(f"{type(err).__name__}: {err}") from err

    def effect_for(self, text: str) -> Effect:
        """The effect of a call with this input; WRITE when it cannot tell."""
        if isinstance(self.effect, Effect):
            return self.effect
        try:
            return Effect(self.effect(self.parse(text)))
        except Exception:
            return Effect.WRITE

    def dry_run_result(self, text: str) -> Optional[Output]:
        """The stub result of a dry-run call, or None for the host's default."""
        if not self.has_dry_run:
            return None
        value = self.dry_run
        if callable(value):
            value = value(self.parse(text))
        return None if value is None else to_output(value)

    def run(self, text: str, ctx: CallContext) -> Output:
        """Run the call; raises :class:`ToolError` (other exceptions become ``Failed``)."""
        try:
            args = []
            if self.wants_input:
                args.append(self.parse(text))
            if self.wants_ctx:
                args.append(ctx)
            return to_output(self.func(*args))
        except ToolError:
            raise
        except Exception as err:
            from . import http, kv

            if isinstance(err, http.Error):
                raise err.to_tool_error() from err
            if isinstance(err, kv.Error):
                raise Failed(str(err)) from err
            message = str(err)
            raise Failed(f"{type(err).__name__}: {message}" if message else type(err).__name__) from err


_REGISTRY: list[ToolSpec] = []


def registered() -> ToolSpec:
    """The one tool this program defines (what the component exports)."""
    if len(_REGISTRY) != 1:
        raise RuntimeError(f"toolhost: expected exactly one @tool function, found {len(_REGISTRY)}")
    return _REGISTRY[0]


def tool(
    func: Optional[Callable[..., Any]] = None,
    *,
    description: Optional[str] = None,
    effect: Union[Effect, Callable[[Any], Effect]] = Effect.WRITE,
    dry_run: Any = None,
    input_schema: Optional[dict] = None,
    output_schema: Optional[dict] = None,
    time_args: Optional[list] = None,
) -> Any:
    """Declare the function a tool component runs.

    The function takes ``(input, ctx)``, ``(input)`` or nothing. ``input`` is
    annotated with a dataclass or TypedDict; its JSON Schema is the tool's
    input schema (override with ``input_schema=``), and the call's JSON is
    converted into it before the function runs. ``ctx`` is a
    :class:`CallContext`.

    - ``description``: for the model (dedented); default: the docstring.
    - ``effect``: an :class:`Effect`, or a function ``input -> Effect``
      (the host then asks for each call's effect).
    - ``dry_run``: the result of a stubbed call in a dry-run session: a
      value, or a function ``input -> value`` (converted like a return value).
    - ``output_schema``: JSON Schema of the structured result (advertised).
    - ``time_args``: input properties that carry RFC 3339 time bounds.

    Returns the function unchanged, so it can be unit-tested natively.
    """

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        params = list(inspect.signature(fn).parameters.values())
        if len(params) > 2:
            raise TypeError("toolhost: a tool function takes (input, ctx), (input) or ()")
        wants_input = len(params) >= 1
        input_type = None
        if wants_input:
            hints = typing.get_type_hints(fn, include_extras=True)
            input_type = hints.get(params[0].name)
        if input_schema is not None:
            schema: Optional[dict] = input_schema
        elif not wants_input:
            schema = None
        elif input_type is None:
            raise TypeError(
                "toolhost: annotate the input parameter with a dataclass or TypedDict, "
                "or pass input_schema="
            )
        else:
            schema = schema_of(input_type)
            if schema.get("type") != "object":
                raise TypeError("toolhost: the input type must be a dataclass or TypedDict")
        text = description if description is not None else (fn.__doc__ or "")
        spec = ToolSpec(
            func=fn,
            description=dedent(text),
            input_type=input_type,
            input_schema=schema,
            output_schema=output_schema,
            effect=effect,
            dry_run=dry_run,
            has_dry_run=dry_run is not None,
            time_args=list(time_args or []),
            wants_input=wants_input,
            wants_ctx=len(params) == 2,
        )
        fn.__toolhost__ = spec  # type: ignore[attr-defined]
        _REGISTRY.append(spec)
        return fn

    return register(func) if func is not None else register
