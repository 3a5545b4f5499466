"""Files a call leaves for the user: artifacts of its session (``toolhost:tool/artifacts``).

The SDK page's ``ctx.artifacts``. The operator grants them: ``artifacts = "write"``
in the tool's ``[tools.<name>]`` saves and lists, ``"read"`` only lists; a read
call only lists. The host fills in the session. Clients download an artifact
over the HTTP API, read it as an MCP resource (its ``uri``), and see an
``artifact.created`` event.

    from toolhost import artifacts

    saved = artifacts.save("report.md", "# Report\\n", "text/markdown", tags=["report"])
    artifacts.save_file("build.tar.gz", "/workspace/out/build.tar.gz", "application/gzip")

The host's refusal raises :class:`ArtifactError` with its reason (uncaught, it
fails the call). Outside a component (e.g. in unit tests) there is no session:
each function raises :class:`ArtifactError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, List, Union

from . import _host

__all__ = ["Artifact", "ArtifactError", "save", "save_file", "list_all"]


class ArtifactError(Exception):
    """Why the host did not save or list: not granted, a read call, a bad name,
    media type or tag, or the session's bytes used up."""


@dataclass
class Artifact:
    """An artifact as stored."""

    name: str
    media_type: str
    size: int
    tags: List[str] = field(default_factory=list)
    session: str = ""
    """The session it belongs to."""
    created_at: str = ""
    """When it was saved (RFC 3339)."""
    uri: str = ""
    """Its address for MCP clients (``toolhost://sessions/<id>/artifacts/<name>``)."""

    @classmethod
    def _from_wit(cls, raw: Any) -> "Artifact":
        return cls(raw.name, raw.media_type, raw.size, list(raw.tags), raw.session, raw.created_at, raw.uri)


def _raw() -> Any:
    return _host.bindings("artifacts", ArtifactError, "no session outside a component")


def _tags(tags: Iterable[str]) -> List[str]:
    if isinstance(tags, str):
        raise TypeError("tags is a list of strings, not a string")
    return [str(tag) for tag in tags]


def _call(operation: Any, *args: Any) -> Any:
    return _host.call(ArtifactError, operation, *args)


def save(name: str, data: Union[bytes, str], media_type: str = "application/octet-stream",
         tags: Iterable[str] = ()) -> Artifact:
    """Save ``data`` (``str`` is UTF-8) as the artifact ``name`` of the call's session,
    replacing one of that name."""
    raw = _raw()
    body = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    return Artifact._from_wit(_call(raw.save, str(name), str(media_type), body, _tags(tags)))


def save_file(name: str, path: str, media_type: str = "application/octet-stream",
              tags: Iterable[str] = ()) -> Artifact:
    """Save the file at ``path`` (under ``/workspace`` or ``/state``, or relative to the
    workspace) as the artifact ``name``; the host reads it, so a large file never passes
    through the tool's memory."""
    raw = _raw()
    return Artifact._from_wit(_call(raw.save_file, str(name), str(path), str(media_type), _tags(tags)))


def list_all() -> List[Artifact]:
    """The session's artifacts, by name."""
    raw = _raw()
    return [Artifact._from_wit(a) for a in _call(raw.list_artifacts)]
