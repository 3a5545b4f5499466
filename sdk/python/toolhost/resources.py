"""Resources a tool's component offers to MCP clients (``resources/list``,
``resources/templates/list``, ``resources/read``).

Decorate functions in ``tool.py`` beside the ``@tool`` function:
``@resources.resource(uri)`` on a function with no parameters offers the
resource at ``uri``; ``@resources.template(uri_template)`` on a function
whose keyword parameters are the template's ``{name}`` expressions offers
every resource whose address matches it. A read function returns a ``str``
(text) or ``bytes`` (a blob), both at the address read with the declared
media type, or a list of :class:`Contents`; ``raise NotFound()`` when nothing
is at the address::

    from toolhost import kv, resources

    @resources.template("notes://{id}", media_type="text/markdown")
    def note(id: str) -> str:
        \"\"\"A note, by its id.\"\"\"
        text = kv.open("notes").get(id)
        if text is None:
            raise resources.NotFound()
        return text.decode()

The host lists the resources and templates when the component loads and runs
a read with the tool's grants, read-only, and no workspace. It passes a
template's values percent-decoded. A call tells subscribed clients that a
resource of its own component changed with :func:`updated`.
"""

from __future__ import annotations

import inspect
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Union

from .errors import ToolError
from .text import dedent

__all__ = [
    "resource", "template", "Contents", "NotFound", "updated", "read",
    "ResourceSpec", "TemplateSpec", "registered_resources", "registered_templates",
]


class NotFound(Exception):
    """Nothing is at the address read (now): ``raise resources.NotFound()``.

    MCP clients get "resource not found"; a message given here is not sent.
    """


@dataclass
class Contents:
    """The contents of one resource: ``data`` is text (``str``) or a blob (``bytes``)."""

    uri: str
    data: Union[str, bytes]
    media_type: Optional[str] = None

    def __post_init__(self) -> None:
        if isinstance(self.data, (bytearray, memoryview)):
            self.data = bytes(self.data)
        if not isinstance(self.data, (str, bytes)):
            raise TypeError(f"a resource's data is str or bytes, not {type(self.data).__name__}")


def _contents(result: Any, uri: str, media_type: Optional[str]) -> list:
    """A read function's result as a list of :class:`Contents`."""
    if isinstance(result, (str, bytes, bytearray, memoryview)):
        return [Contents(uri, result, media_type)]
    if isinstance(result, Contents):
        return [result]
    if isinstance(result, (list, tuple)):
        for item in result:
            if not isinstance(item, Contents):
                raise TypeError(f"a resource read returns str, bytes or a list of Contents, "
                                f"not a list holding {type(item).__name__}")
        return list(result)
    raise TypeError(f"a resource read returns str, bytes or a list of Contents, not {type(result).__name__}")


def _description(description: Optional[str], func: Callable[..., Any]) -> Optional[str]:
    doc = description if description is not None else inspect.getdoc(func)
    return dedent(doc) if doc else None


@dataclass
class ResourceSpec:
    """Everything ``@resources.resource`` learned about a read function."""

    uri: str
    name: str
    func: Callable[[], Any]
    title: Optional[str] = None
    description: Optional[str] = None
    media_type: Optional[str] = None

    def read(self) -> list:
        """Run the function; its result as a list of :class:`Contents`."""
        return _contents(self.func(), self.uri, self.media_type)


# A simple RFC 6570 expression, as the host accepts them.
_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_PARAMETER_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")


def _parse_template(uri_template: str) -> tuple:
    """The parameter names of ``uri_template`` and a regex its addresses match."""
    names: list = []
    pattern = []
    at = 0
    for match in _EXPRESSION.finditer(uri_template):
        name = match.group(1)
        if not _PARAMETER_NAME.fullmatch(name):
            raise ValueError(f"resource template {uri_template!r}: {{{name}}} is not a simple "
                             "expression (1-64 characters of A-Z, a-z, 0-9 and _)")
        if name in names:
            raise ValueError(f"resource template {uri_template!r} names {{{name}}} twice")
        literal = uri_template[at:match.start()]
        if names and not literal:
            raise ValueError(f"resource template {uri_template!r}: two expressions side by side")
        pattern.append(re.escape(literal))
        pattern.append("([^/?#]+)")
        names.append(name)
        at = match.end()
    rest = uri_template[at:]
    if "{" in rest or "}" in rest:
        raise ValueError(f"resource template {uri_template!r} has an unmatched brace")
    pattern.append(re.escape(rest))
    return names, re.compile("".join(pattern), re.DOTALL)


@dataclass
class TemplateSpec:
    """Everything ``@resources.template`` learned about a read function."""

    uri_template: str
    name: str
    func: Callable[..., Any]
    title: Optional[str] = None
    description: Optional[str] = None
    media_type: Optional[str] = None
    parameters: list = field(default_factory=list)
    pattern: Any = None

    def matches(self, uri: str) -> bool:
        """Whether ``uri`` follows the template."""
        return self.pattern is not None and self.pattern.fullmatch(uri) is not None

    def read(self, uri: str, parameters: dict) -> list:
        """Run the function with ``parameters``; its result as a list of :class:`Contents`."""
        return _contents(self.func(**parameters), uri, self.media_type)


_RESOURCES: dict = {}
_TEMPLATES: dict = {}


def registered_resources() -> list:
    """The ``@resources.resource`` functions, in the order they were defined."""
    return list(_RESOURCES.values())


def registered_templates() -> list:
    """The ``@resources.template`` functions, in the order they were defined."""
    return list(_TEMPLATES.values())


def resource(
    uri: str,
    *,
    name: Optional[str] = None,
    title: Optional[str] = None,
    description: Optional[str] = None,
    media_type: Optional[str] = None,
) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Offer the resource at ``uri``, read by the decorated function (no
    parameters); ``name`` defaults to the function's, ``description`` to its
    docstring."""

    def register(func: Callable[[], Any]) -> Callable[[], Any]:
        if uri in _RESOURCES:
            raise ValueError(f"two @resources.resource functions offer {uri!r}")
        _RESOURCES[uri] = ResourceSpec(
            uri=uri,
            name=name or func.__name__,
            func=func,
            title=title,
            description=_description(description, func),
            media_type=media_type,
        )
        return func

    return register


def template(
    uri_template: str,
    *,
    name: Optional[str] = None,
    title: Optional[str] = None,
    description: Optional[str] = None,
    media_type: Optional[str] = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Offer the resources whose addresses follow ``uri_template`` (simple
    ``{name}`` expressions), read by the decorated function with each
    expression's value as a keyword argument (a ``str``); ``name`` defaults
    to the function's, ``description`` to its docstring."""

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        names, pattern = _parse_template(uri_template)
        params = list(inspect.signature(func).parameters.values())
        by_keyword = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        takes_any = any(p.kind == p.VAR_KEYWORD for p in params)
        for missing in [n for n in names if n not in by_keyword and not takes_any]:
            raise ValueError(f"{func.__name__} takes no keyword parameter {missing!r} for {uri_template!r}")
        for p in params:
            given = p.name in names and p.kind != p.POSITIONAL_ONLY
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and not given and p.default is p.empty:
                raise ValueError(f"{func.__name__}'s parameter {p.name!r} is no expression of "
                                 f"{uri_template!r} and has no default")
        if uri_template in _TEMPLATES:
            raise ValueError(f"two @resources.template functions offer {uri_template!r}")
        _TEMPLATES[uri_template] = TemplateSpec(
            uri_template=uri_template,
            name=name or func.__name__,
            func=func,
            title=title,
            description=_description(description, func),
            media_type=media_type,
            parameters=names,
            pattern=pattern,
        )
        return func

    return register


def read(uri: str, parameters: Iterable = ()) -> list:
    """Read ``uri`` as the host does: the listed resource at ``uri`` when no
    ``parameters`` are given, else the template with those parameter names
    (``(name, value)`` pairs, in its order) that ``uri`` follows. Returns the
    list of :class:`Contents`; raises :class:`NotFound` when neither offers
    ``uri``, and whatever the read function raises."""
    pairs = [(str(k), str(v)) for (k, v) in parameters]
    if not pairs and uri in _RESOURCES:
        return _RESOURCES[uri].read()
    names = [k for (k, _) in pairs]
    candidates = [t for t in _TEMPLATES.values() if t.parameters == names]
    # The host matched the template; the names pick it, the address decides
    # between templates with the same names.
    chosen = next((t for t in candidates if t.matches(uri)), candidates[0] if candidates else None)
    if chosen is None:
        raise NotFound()
    return chosen.read(uri, dict(pairs))


def error_message(err: BaseException) -> str:
    """The ``failed`` message of a read that raised ``err`` (like a tool's)."""
    if isinstance(err, ToolError):
        return err.message
    return f"{type(err).__name__}: {err}"


def updated(uri: str) -> None:
    """Tell the MCP clients subscribed to ``uri`` that it changed.

    Allowed for the addresses the tool's own component offers (a listed
    resource, or one following its templates), at most 64 distinct addresses
    per call; the host's refusal raises ``ValueError`` with its reason.
    Outside a component (e.g. in unit tests) it goes to stderr.
    """
    try:
        from wit_world.imports import resource_updates as raw
    except ImportError:
        print(f"[resource updated] {uri}", file=sys.stderr)
        return
    from componentize_py_types import Err

    try:
        raw.updated(str(uri))
    except Err as err:
        raise ValueError(str(err.value)) from None
