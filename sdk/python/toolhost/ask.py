"""Ask the user (elicitation), the client's model (sampling) or the client for
its roots during a call, one question at a time or several at once under keys
of the tool's (``toolhost:tool/ask``).

Each is granted per tool in ``toolhost.toml`` (``ask = ["user", "model",
"roots"]`` in ``[tools.<name>]``)::

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

    # Several at once (an MCP 2026-07-28 client answers them in one round):
    choice, title, folders = ask.ask_all({
        "confirm": ask.form("Go ahead?", {"type": "object", "properties": {}}),
        "title": ask.conversation(f"A title for:\\n\\n{text}", max_tokens=20),
        "roots": ask.ROOTS,
    })

:func:`elicit` shows the user a form (a flat object schema: properties of
type string, number, integer, boolean or an array of choices) and returns the
:class:`Answer`; :func:`sample` asks the client's model to continue a
conversation and returns the :class:`Sample`; :func:`roots` asks the client
for the folders and files the user works in, a list of :class:`Root`.
:func:`ask_all` asks 1 to 8 questions at once, each a :class:`Question`
(:func:`form`, :func:`conversation` or :data:`ROOTS`) under a key, and returns
their answers in the order asked. The call's timeout stops while it
waits; the wait has its own limit (``[limits] ask_timeout_ms``, 10 minutes by
default). The host's refusal (not granted, a surface that cannot ask, a
schema that is not a flat form, too many calls waiting, no answer in time)
raises :class:`AskError` with its reason. Outside a component (e.g. in unit
tests) there is nobody to ask: all of them raise :class:`AskError`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple, Union

from .output import Audio, Image, Text

__all__ = [
    "AskError", "Answer", "Message", "Sample", "Root", "Question", "ROOTS",
    "elicit", "sample", "roots", "ask_all", "form", "conversation", "user", "assistant",
]

_ACTIONS = ("accept", "decline", "cancel")
_ROLES = ("user", "assistant")
_U32_MAX = 2**32 - 1
_KINDS = ("user", "model", "roots")
_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_MAX_QUESTIONS = 8


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


@dataclass
class Root:
    """A folder or file the user works in, as the client names it: ``uri``
    (a ``file://`` URI as a rule) and ``name`` (for people, or None)."""

    uri: str
    name: Optional[str] = None


@dataclass(frozen=True)
class Question:
    """One question of :func:`ask_all`. Make it with :func:`form` (for the
    user), :func:`conversation` (for the client's model) or use
    :data:`ROOTS` (for the client's roots).

    ``kind`` is ``"user"``, ``"model"`` or ``"roots"``, what the tool must be
    granted to ask it. A form has its ``message`` and ``schema`` (as
    :func:`elicit` takes them); a conversation its ``messages`` (a tuple of
    :class:`Message`) and ``options`` (:func:`sample`'s keyword arguments).
    """

    kind: str
    message: Optional[str] = None
    schema: Optional[dict] = None
    messages: Tuple[Message, ...] = ()
    options: Optional[dict] = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"a question's kind is user, model or roots, not {self.kind!r}")
        if self.kind == "user":
            _form_text(self.message, self.schema)
        elif self.kind == "model":
            object.__setattr__(self, "messages", tuple(_messages(self.messages)))
            if not isinstance(self.options, dict):
                raise TypeError("a conversation's options are sample()'s keyword arguments, "
                                "max_tokens at least: make it with ask.conversation()")
            _options(**self.options)


def form(message: str, schema: dict) -> Question:
    """A question for the user, for :func:`ask_all`: ``message`` with a form
    whose fields ``schema`` describes, as :func:`elicit` asks it (granted as
    ``"user"``). Its answer is an :class:`Answer`."""
    return Question("user", message=message, schema=schema)


def conversation(
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
) -> Question:
    """A question for the client's model, for :func:`ask_all`: continue
    ``messages``, with :func:`sample`'s arguments (granted as ``"model"``).
    Its answer is a :class:`Sample`."""
    return Question("model", messages=tuple(_messages(messages)), options={
        "max_tokens": max_tokens,
        "system_prompt": system_prompt,
        "temperature": temperature,
        "stop_sequences": _kept(stop_sequences),
        "model_hints": _kept(model_hints),
        "cost_priority": cost_priority,
        "speed_priority": speed_priority,
        "intelligence_priority": intelligence_priority,
    })


ROOTS = Question("roots")
"""The question for the client's roots, for :func:`ask_all` (granted as
``"roots"``): the folders and files the user works in (MCP ``roots/list``).
Its answer is a list of :class:`Root`."""


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


def _kept(values: Iterable[str]) -> Any:
    """``values`` as a tuple, so that a generator survives being checked
    (a ``str`` is kept as it is, for :func:`_strings` to refuse)."""
    return values if isinstance(values, str) else tuple(values)


def _form_text(message: Any, schema: Any) -> str:
    """``elicit``'s arguments checked; the schema as JSON text."""
    if not isinstance(message, str):
        raise TypeError(f"message is a str, not {type(message).__name__}")
    if not isinstance(schema, dict):
        raise TypeError(f"schema is a dict (a JSON Schema object), not {type(schema).__name__}")
    return json.dumps(schema, separators=(",", ":"))


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


def _keyed(questions: Any) -> list:
    """``ask_all``'s questions checked, as ``(key, Question)`` pairs."""
    if isinstance(questions, Mapping):
        pairs = list(questions.items())
    elif isinstance(questions, (str, bytes, Question)):
        raise TypeError(f"ask_all() takes a dict of key: Question or (key, Question) pairs, "
                        f"not a {type(questions).__name__}")
    else:
        try:
            pairs = list(questions)
        except TypeError:
            raise TypeError(f"ask_all() takes a dict of key: Question or (key, Question) pairs, "
                            f"not a {type(questions).__name__}") from None
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"ask_all() takes (key, Question) pairs, not {pair!r}")
        pairs = [tuple(pair) for pair in pairs]
    if not 1 <= len(pairs) <= _MAX_QUESTIONS:
        raise ValueError(f"ask_all() takes 1 to {_MAX_QUESTIONS} questions, not {len(pairs)}")
    seen = set()
    for key, question in pairs:
        if not isinstance(key, str):
            raise TypeError(f"a question's key is a str, not {type(key).__name__}")
        if not _KEY.fullmatch(key):
            raise ValueError(f"the key {key[:65]!r} is not 1-64 characters of A-Z, a-z, 0-9, _, - and .")
        if key in seen:
            raise ValueError(f"the key {key!r} names two questions")
        seen.add(key)
        if not isinstance(question, Question):
            raise TypeError(f"question {key!r} is an ask.Question (ask.form(...), ask.conversation(...) "
                            f"or ask.ROOTS), not {type(question).__name__}")
    return pairs


def _question_to_wit(question: Question, w: Any, types: Any) -> Any:
    if question.kind == "user":
        return w.Question_User(w.FormQuestion(question.message, _form_text(question.message, question.schema)))
    if question.kind == "model":
        return w.Question_Model(w.SamplingQuestion(
            _messages_to_wit(question.messages, w, types), _options_to_wit(_options(**question.options), w)))
    return w.Question_Roots()


_REPLIES = (("_User", "user"), ("_Model", "model"), ("_Roots", "roots"))


def _reply_from_wit(key: str, question: Question, raw: Any) -> Any:
    """The binding's ``answer`` to ``question`` as an :class:`Answer`, a
    :class:`Sample` or a list of :class:`Root`."""
    name = type(raw).__name__
    kind = next((kind for suffix, kind in _REPLIES if name.endswith(suffix)), None)
    if kind is None:
        raise AskError(f"question `{key}`: unknown answer {raw!r}")
    if kind != question.kind:
        raise AskError(f"question `{key}`: the host answered a {question.kind} question with a {kind} answer")
    try:
        if kind == "user":
            return _answer_from_wit(raw.value)
        if kind == "model":
            return _sample_from_wit(raw.value)
        return [Root(str(root.uri), root.name) for root in raw.value]
    except AskError as err:
        raise AskError(f"question `{key}`: {err}") from None


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
    schema_text = _form_text(message, schema)
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


def roots() -> list[Root]:
    """Ask the client for its roots: the folders and files the user works in
    (granted as ``"roots"``; asked under the key ``roots``). Waits for the
    answer; the host's refusal raises :class:`AskError`."""
    return ask_all([("roots", ROOTS)])[0]


def ask_all(
    questions: Union[Mapping[str, Question], Iterable[Tuple[str, Question]]],
) -> list:
    """Ask 1 to 8 questions at once and return every answer, in the order
    asked: an :class:`Answer` for a :func:`form`, a :class:`Sample` for a
    :func:`conversation`, a list of :class:`Root` for :data:`ROOTS`.

    ``questions`` is a dict of ``key: Question`` or a sequence of ``(key,
    Question)`` pairs; each key is 1-64 characters of A-Z, a-z, 0-9, ``_``,
    ``-`` and ``.``, unique (an MCP 2026-07-28 client sees the keys, and a
    request that already answers a key has that question answered without
    asking). Waits for the answers; a question the tool may not ask refuses
    them all before any is asked. The host's refusal (naming the question
    by its key when it is about one) raises :class:`AskError`."""
    asked = _keyed(questions)
    raw, types = _bindings()
    from componentize_py_types import Err

    wanted = [raw.KeyedQuestion(key, _question_to_wit(question, raw, types)) for key, question in asked]
    try:
        answers = list(raw.ask_all(wanted))
    except Err as err:
        raise _refused(err) from None
    if len(answers) != len(asked):
        raise AskError(f"the host answered {len(answers)} of {len(asked)} questions")
    return [_reply_from_wit(key, question, answer) for (key, question), answer in zip(asked, answers)]
