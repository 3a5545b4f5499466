"""Ask the user (elicitation) or the client's model (sampling) during a call
(``toolhost:tool/ask``).

Each is granted per tool in ``toolhost.toml`` (``ask = ["user", "model"]`` in
``[tools.<name>]``)::

    from toolhost import ask

    answer = ask.elicit("Which name should the report carry?", {
        "type": "object",
        "properties": {"name": {"type": "string", "title": "Name", "minLength": 1}},
        "required": ["name"],
    })
    if not answer.accepted:
        return f"Not renamed: the user chose {answer.action}."
    name = answer.content["name"]

    summary = ask.sample(f"Summarise in one sentence:\\n\\n{text}", max_tokens=200).text

:func:`elicit` shows the user a form (a flat object schema: properties of
type string, number, integer, boolean or an array of choices) and returns the
:class:`Answer`; :func:`sample` asks the client's model to continue a
conversation and returns the :class:`Sample`. The call's timeout stops while
it waits; the wait has its own limit (``[limits] ask_timeout_ms``, 10 minutes
by default). The host's refusal (not granted, a surface that cannot ask, a
schema that is not a flat form, too many calls waiting, no answer in time)
raises :class:`AskError` with its reason. Outside a component (e.g. in unit
tests) there is nobody to ask: both raise :class:`AskError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence, Union

from .output import Audio, Image, Text

__all__ = ["AskError", "Answer", "Message", "Sample", "elicit", "sample", "user", "assistant"]

_ACTIONS = ("accept", "decline", "cancel")
_ROLES = ("user", "assistant")
_U32_MAX = 2**32 - 1


class AskError(Exception):
    """The host did not ask, or no answer came: ``str(err)`` (and ``message``) says why.

    Uncaught, it fails the call with ``"AskError: <reason>"``.
    """

    def __init__(self, message: object) -> None:
        super().__init__(str(message))
        self.message = str(message)


@dataclass
class Answer:
    """What the user did with a question.

    ``action`` is ``"accept"`` (``content`` is the form's values, a dict),
    ``"decline"`` (said no) or ``"cancel"`` (dismissed it without choosing);
    ``content`` is None unless accepted.
    """

    action: str
    content: Optional[dict] = None

    def __post_init__(self) -> None:
        if self.action not in _ACTIONS:
            raise ValueError(f"an answer's action is accept, decline or cancel, not {self.action!r}")

    @property
    def accepted(self) -> bool:
        """Whether the user answered the form."""
        return self.action == "accept"


Content = Union[str, Image, Audio]
"""What a sampling message says: text (a ``str``), an :class:`Image` or an :class:`Audio`."""


@dataclass
class Message:
    """One message of the conversation to sample from: ``role`` is ``"user"``
    or ``"assistant"``, ``content`` a ``str`` (text), an :class:`Image` or an
    :class:`Audio` (a :class:`Text` block counts as its text)."""

    role: str
    content: Content

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise ValueError(f"a message's role is user or assistant, not {self.role!r}")
        if isinstance(self.content, Text):
            self.content = self.content.text
        if not isinstance(self.content, (str, Image, Audio)):
            raise TypeError(f"a message's content is a str, Image or Audio, not {type(self.content).__name__}")


def user(content: Content) -> Message:
    """A message the user says."""
    return Message("user", content)


def assistant(content: Content) -> Message:
    """A message the model says."""
    return Message("assistant", content)


@dataclass
class Sample:
    """What the client's model said.

    ``content`` is a ``str`` (text), an :class:`Image` or an :class:`Audio`;
    ``text`` is the text when it is text, else None. ``model`` names the
    model that answered; ``stop_reason`` says why it stopped (``endTurn``,
    ``stopSequence``, ``maxTokens``, ...) when the client said.
    """

    role: str
    text: Optional[str]
    content: Content
    model: str
    stop_reason: Optional[str] = None


# -- conversions (the binding modules are passed in, for native tests) -------


def _answer_from_wit(raw: Any) -> Answer:
    """The binding's ``elicit-answer`` as an :class:`Answer`."""
    name = type(raw).__name__
    if name.endswith("_Accept"):
        try:
            content = json.loads(raw.value)
        except ValueError as err:
            raise AskError(f"the answer is not valid JSON: {err}") from None
        if not isinstance(content, dict):
            raise AskError(f"the answer is not a JSON object: {raw.value[:200]}")
        return Answer("accept", content)
    if name.endswith("_Decline"):
        return Answer("decline")
    if name.endswith("_Cancel"):
        return Answer("cancel")
    raise AskError(f"unknown answer {raw!r}")


def _content_to_wit(content: Content, w: Any, types: Any) -> Any:
    if isinstance(content, str):
        return w.SamplingContent_Text(content)
    if isinstance(content, Image):
        return w.SamplingContent_Image(types.Blob(str(content.media_type), bytes(content.data)))
    if isinstance(content, Audio):
        return w.SamplingContent_Audio(types.Blob(str(content.media_type), bytes(content.data)))
    raise TypeError(f"a message's content is a str, Image or Audio, not {type(content).__name__}")


def _content_from_wit(raw: Any) -> Content:
    name = type(raw).__name__
    if name.endswith("_Text"):
        return str(raw.value)
    if name.endswith("_Image"):
        return Image(bytes(raw.value.data), raw.value.media_type)
    if name.endswith("_Audio"):
        return Audio(bytes(raw.value.data), raw.value.media_type)
    raise AskError(f"unknown sampling content {raw!r}")


def _messages(messages: Union[str, Message, Iterable[Message]]) -> list:
    if isinstance(messages, str):
        return [Message("user", messages)]
    if isinstance(messages, Message):
        return [messages]
    out = list(messages)
    for m in out:
        if not isinstance(m, Message):
            raise TypeError(f"sample() takes a str or a list of Message, not a list holding {type(m).__name__}")
    return out


def _messages_to_wit(messages: Sequence[Message], w: Any, types: Any) -> list:
    return [
        w.SamplingMessage(w.Role.ASSISTANT if m.role == "assistant" else w.Role.USER,
                          _content_to_wit(m.content, w, types))
        for m in messages
    ]


def _number(name: str, value: Optional[float]) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} is a number, not {type(value).__name__}")
    return float(value)


def _strings(name: str, values: Iterable[str]) -> list:
    if isinstance(values, str):
        raise TypeError(f"{name} is a list of strings, not a string")
    out = list(values)
    for v in out:
        if not isinstance(v, str):
            raise TypeError(f"{name} holds strings, not {type(v).__name__}")
    return out


def _options(
    *,
    max_tokens: int,
    system_prompt: Optional[str] = None,
    temperature: Optional[float] = None,
    stop_sequences: Iterable[str] = (),
    model_hints: Iterable[str] = (),
    cost_priority: Optional[float] = None,
    speed_priority: Optional[float] = None,
    intelligence_priority: Optional[float] = None,
) -> dict:
    """``sample``'s options checked, as the fields of ``sampling-options``
    (``model_preferences`` a tuple of its fields, or None when nothing is
    preferred)."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 1 <= max_tokens <= _U32_MAX:
        raise ValueError(f"max_tokens is a whole number from 1 to {_U32_MAX}, not {max_tokens!r}")
    if system_prompt is not None and not isinstance(system_prompt, str):
        raise TypeError(f"system_prompt is a str, not {type(system_prompt).__name__}")
    hints = _strings("model_hints", model_hints)
    priorities = (
        _number("cost_priority", cost_priority),
        _number("speed_priority", speed_priority),
        _number("intelligence_priority", intelligence_priority),
    )
    preferences = (hints, *priorities) if hints or any(p is not None for p in priorities) else None
    return {
        "system_prompt": system_prompt,
        "max_tokens": max_tokens,
        "temperature": _number("temperature", temperature),
        "stop_sequences": _strings("stop_sequences", stop_sequences),
        "model_preferences": preferences,
    }


def _options_to_wit(options: dict, w: Any) -> Any:
    preferences = options["model_preferences"]
    return w.SamplingOptions(
        options["system_prompt"],
        options["max_tokens"],
        options["temperature"],
        options["stop_sequences"],
        None if preferences is None else w.ModelPreferences(*preferences),
    )


def _sample_from_wit(raw: Any) -> Sample:
    content = _content_from_wit(raw.content)
    role = "assistant" if raw.role.name == "ASSISTANT" else "user"
    return Sample(role, content if isinstance(content, str) else None, content, raw.model, raw.stop_reason)


def _bindings() -> tuple:
    try:
        from wit_world.imports import ask as raw
        from wit_world.imports import toolhost_tool_types as types
    except ImportError:
        raise AskError("not running in a toolhost component: there is nobody to ask") from None
    return raw, types


def _refused(err: Any) -> AskError:
    value = err.value
    return AskError(value if isinstance(value, str) else repr(value))


# -- the calls ----------------------------------------------------------------


def elicit(message: str, schema: dict) -> Answer:
    """Ask the user ``message`` (at most 4096 characters) with a form whose
    fields ``schema`` describes (a flat JSON Schema object: ``properties`` of
    type string, number, integer, boolean or an array of choices, and
    ``required``). Waits for the answer; the host's refusal raises
    :class:`AskError`."""
    if not isinstance(message, str):
        raise TypeError(f"message is a str, not {type(message).__name__}")
    if not isinstance(schema, dict):
        raise TypeError(f"schema is a dict (a JSON Schema object), not {type(schema).__name__}")
    schema_text = json.dumps(schema, separators=(",", ":"))
    raw, _ = _bindings()
    from componentize_py_types import Err

    try:
        answer = raw.elicit(message, schema_text)
    except Err as err:
        raise _refused(err) from None
    return _answer_from_wit(answer)


def sample(
    messages: Union[str, Message, Iterable[Message]],
    *,
    max_tokens: int,
    system_prompt: Optional[str] = None,
    temperature: Optional[float] = None,
    stop_sequences: Iterable[str] = (),
    model_hints: Iterable[str] = (),
    cost_priority: Optional[float] = None,
    speed_priority: Optional[float] = None,
    intelligence_priority: Optional[float] = None,
) -> Sample:
    """Ask the client's model to continue ``messages``: a ``str`` (one user
    message) or a list of :class:`Message` (at most 64). ``max_tokens``
    bounds the answer (the client may sample fewer); ``model_hints`` (model
    names or families, best first) and the priorities (0 to 1) help the
    client pick a model. Waits for the answer; the host's refusal raises
    :class:`AskError`."""
    wanted = _messages(messages)
    checked = _options(
        max_tokens=max_tokens,
        system_prompt=system_prompt,
        temperature=temperature,
        stop_sequences=stop_sequences,
        model_hints=model_hints,
        cost_priority=cost_priority,
        speed_priority=speed_priority,
        intelligence_priority=intelligence_priority,
    )
    raw, types = _bindings()
    from componentize_py_types import Err

    try:
        result = raw.sample(_messages_to_wit(wanted, raw, types), _options_to_wit(checked, raw))
    except Err as err:
        raise _refused(err) from None
    return _sample_from_wit(result)
