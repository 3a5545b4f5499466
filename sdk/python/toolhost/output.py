"""A tool's result: content blocks, an optional structured value, an error flag.

A tool may return:

- ``str``: one text block;
- ``dict`` (or a dataclass instance): one JSON block, and the structured result;
- a list of blocks (:class:`Text`, :class:`Json`, :class:`Image`,
  :class:`Audio`, :class:`Document`, :class:`SearchResult`,
  :class:`ResourceLink`);
- any other JSON value: one JSON block;
- ``None``: no blocks;
- an :class:`Output` for full control (e.g. ``is_error``).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Optional, Union

__all__ = [
    "Text", "Json", "Image", "Audio", "Document", "SearchResult", "ResourceLink", "Content",
    "Output", "to_output",
]


@dataclass
class Text:
    """A text block."""

    text: str


@dataclass
class Json:
    """A JSON block holding ``value`` (the structured result is not set)."""

    value: Any


@dataclass
class Image:
    """An image block: raw bytes and their media type (e.g. ``image/png``)."""

    data: bytes
    media_type: str = "image/png"


@dataclass
class Audio:
    """An audio block: raw bytes and their media type (e.g. ``audio/wav``)."""

    data: bytes
    media_type: str = "audio/wav"


@dataclass
class Document:
    """A document block: raw bytes, media type, an optional name or title, and
    the URI it lives at when it has one (MCP clients get it as the embedded
    resource's URI)."""

    data: bytes
    media_type: str
    name: Optional[str] = None
    uri: Optional[str] = None


@dataclass
class SearchResult:
    """A search hit: where it was found, its title, the matching text."""

    source: str
    title: str
    text: str


@dataclass
class ResourceLink:
    """A link to a resource the client can fetch or read, instead of its bytes."""

    uri: str
    name: str
    description: Optional[str] = None
    media_type: Optional[str] = None


Content = Union[Text, Json, Image, Audio, Document, SearchResult, ResourceLink]
_BLOCKS = (Text, Json, Image, Audio, Document, SearchResult, ResourceLink)


@dataclass
class Output:
    """A result: ``content`` blocks in order, the ``structured`` object, ``is_error``."""

    content: list = field(default_factory=list)
    structured: Optional[dict] = None
    is_error: bool = False

    @classmethod
    def error(cls, text: str) -> "Output":
        """One text block reporting failure (the model still sees it)."""
        return cls([Text(text)], None, True)


def to_output(value: Any) -> Output:
    """Convert whatever a tool returned into an :class:`Output`."""
    if isinstance(value, Output):
        return value
    if value is None:
        return Output()
    if isinstance(value, str):
        return Output([Text(value)])
    if isinstance(value, _BLOCKS):
        return Output([value])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, dict):
        return Output([Json(value)], value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, _BLOCKS) for v in value):
        return Output(list(value))
    return Output([Json(value)])


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_default)


def _default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "value"):  # enum.Enum
        return value.value
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
