"""Outgoing HTTP over ``wasi:http/outgoing-handler`` (``urllib`` has no sockets in the sandbox).

The host lets a tool reach only the origins its grant lists
(``http = ["https://api.github.com"]``), and a call whose effect is ``read``
only with GET and HEAD. A refused request raises :class:`Error` with
``kind == "denied"`` and a message that says so.

Redirects are not followed: a 3xx response comes back as it is, and
:func:`resolve` turns its ``Location`` into the next URL::

    from toolhost import http
    page = http.fetch("https://example.com/")
    print(page.status, page.text())
    made = http.fetch("https://api.example.com/items", method="POST",
                      headers={"content-type": "application/json"},
                      body=b'{"name":"x"}', timeout=5.0)

An uncaught :class:`Error` fails the call: ``transient`` (retried for read
and idempotent tools) for timeouts and refused or dropped connections,
``failed`` otherwise.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["DEFAULT_MAX_BODY_BYTES", "Error", "Response", "fetch", "get", "resolve"]

DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
"""How many response-body bytes :func:`fetch` keeps unless told otherwise (10 MiB)."""

_DENIED = (
    "refused by the host: the origin is not in this tool's `http` grant, the "
    "method is not allowed for this call's effect (read calls may only GET and "
    "HEAD), or the call used up its request allowance; the call's trace says which"
)

Headers = Union[Mapping[str, str], Sequence[Tuple[str, str]], None]


class Error(Exception):
    """Why a request failed; the message names the request and the cause.

    ``kind``: ``denied`` (not granted), ``invalid-request``, ``timeout``,
    ``connection``, ``protocol`` or ``other``. ``transient``: whether trying
    again later may succeed.
    """

    def __init__(self, kind: str, message: str, transient: Optional[bool] = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.transient = kind == "timeout" if transient is None else transient

    @property
    def is_denied(self) -> bool:
        """Whether the host refused the request (not granted)."""
        return self.kind == "denied"

    def to_tool_error(self) -> Exception:
        """The tool error an uncaught instance becomes: Transient or Failed."""
        from .errors import Failed, Transient

        return Transient(self.message) if self.transient else Failed(self.message)


@dataclass
class Response:
    """An HTTP response with its body read (up to the request's cap)."""

    status: int
    headers: list = field(default_factory=list)
    """(name, value) pairs in the order received; values decoded as UTF-8, lossily."""
    body: bytes = b""
    truncated: bool = False
    """Whether the body was longer than the cap (the rest was not read)."""

    def header(self, name: str) -> Optional[str]:
        """The first value of header ``name`` (case-insensitive)."""
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    @property
    def ok(self) -> bool:
        """Whether the status is 2xx."""
        return 200 <= self.status < 300

    @property
    def is_redirect(self) -> bool:
        """Whether the status is a redirect with a ``Location`` header."""
        return self.status in (301, 302, 303, 307, 308) and self.header("location") is not None

    def text(self) -> str:
        """The body as text (invalid UTF-8 replaced)."""
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body decoded from JSON."""
        try:
            return json.loads(self.body)
        except ValueError as err:
            raise Error("protocol", f"response body is not the expected JSON: {err}") from None


def get(url: str, **kwargs: Any) -> Response:
    """``fetch(url, method="GET", ...)``."""
    return fetch(url, **kwargs)


def fetch(
    url: str,
    method: str = "GET",
    headers: Headers = None,
    body: Union[bytes, str, None] = None,
    timeout: Optional[float] = None,
    max_body_bytes: Optional[int] = None,
) -> Response:
    """Send a request and read the response, keeping at most ``max_body_bytes`` of its body.

    ``timeout`` (seconds) asks the host to give up when connecting, waiting
    for the first byte or between bytes takes longer (its own limits apply
    too). Raises :class:`Error`.
    """
    from componentize_py_types import Err, Ok
    from wit_world.imports import outgoing_handler
    from wit_world.imports import wasi_http_types as t

    cap = DEFAULT_MAX_BODY_BYTES if max_body_bytes is None else max(0, int(max_body_bytes))
    scheme, authority, path_and_query = _target(url)
    context = f"{method} {url}"

    def fail(kind: str, what: str) -> Error:
        return Error(kind, f"{context}: {what}")

    fields = t.Fields()
    pairs = headers.items() if isinstance(headers, Mapping) else (headers or [])
    for name, value in pairs:
        try:
            fields.append(name, value.encode() if isinstance(value, str) else bytes(value))
        except Err as err:
            raise fail("invalid-request", f"header {json.dumps(name)}: {_kebab(err.value)}") from None
    request = t.OutgoingRequest(fields)
    try:
        request.set_method(_method(t, method))
    except Err:
        raise fail("invalid-request", "invalid method") from None
    try:
        request.set_scheme(t.Scheme_Http() if scheme == "http" else t.Scheme_Https())
    except Err:
        raise fail("invalid-request", "invalid scheme") from None
    try:
        request.set_authority(authority)
    except Err:
        raise fail("invalid-request", "invalid host or port") from None
    try:
        request.set_path_with_query(path_and_query)
    except Err:
        raise fail("invalid-request", "invalid path") from None
    outgoing_body = request.body()

    options = None
    if timeout is not None:
        nanos = max(0, int(timeout * 1e9))
        options = t.RequestOptions()
        for setter in (options.set_connect_timeout, options.set_first_byte_timeout,
                       options.set_between_bytes_timeout):
            try:
                setter(nanos)
            except Err:  # the host's own limits still apply
                pass

    try:
        pending = outgoing_handler.handle(request, options)
    except Err as err:
        outgoing_body.__exit__(None, None, None)
        raise _from_code(context, err.value) from None

    try:
        if body is not None:
            data = body.encode() if isinstance(body, str) else bytes(body)
            stream = outgoing_body.write()
            try:
                for start in range(0, len(data), 4096):  # at most 4096 bytes a call
                    stream.blocking_write_and_flush(data[start:start + 4096])
            except Err as err:
                raise _from_stream(context, err.value) from None
            finally:
                stream.__exit__(None, None, None)
        try:
            t.OutgoingBody.finish(outgoing_body, None)
        except Err as err:
            raise _from_code(context, err.value) from None

        while True:
            result = pending.get()
            if result is not None:
                break
            with pending.subscribe() as pollable:
                pollable.block()
    finally:
        pending.__exit__(None, None, None)

    if not isinstance(result, Ok):
        raise fail("other", "response already taken")
    inner = result.value
    if isinstance(inner, Err):
        raise _from_code(context, inner.value)
    response = inner.value if isinstance(inner, Ok) else inner
    try:
        status = response.status()
        with response.headers() as fields_in:
            entries = fields_in.entries()
        header_list = [(k, v.decode("utf-8", "replace")) for k, v in entries]
        data, truncated = _read_body(context, response, cap)
    finally:
        response.__exit__(None, None, None)
    return Response(status, header_list, data, truncated)


def _read_body(context: str, response: Any, cap: int) -> Tuple[bytes, bool]:
    """Read at most ``cap`` bytes; True when more was left unread."""
    from componentize_py_types import Err

    try:
        incoming = response.consume()
        stream = incoming.stream()
    except Err:
        raise Error("other", f"{context}: response body unavailable") from None
    chunks: list = []
    size = 0
    try:
        while True:
            remaining = cap - size
            # At the cap, read one more byte to learn whether anything is left.
            want = min(max(remaining, 1), 64 * 1024)
            try:
                chunk = stream.blocking_read(want)
            except Err as err:
                if type(err.value).__name__.endswith("Closed"):
                    return b"".join(chunks), False
                raise _from_stream(context, err.value) from None
            if remaining == 0:
                if chunk:
                    return b"".join(chunks), True
                continue
            chunks.append(chunk)
            size += len(chunk)
    finally:
        stream.__exit__(None, None, None)
        incoming.__exit__(None, None, None)


def _method(t: Any, name: str) -> Any:
    known = {
        "GET": t.Method_Get, "HEAD": t.Method_Head, "POST": t.Method_Post,
        "PUT": t.Method_Put, "DELETE": t.Method_Delete, "CONNECT": t.Method_Connect,
        "OPTIONS": t.Method_Options, "TRACE": t.Method_Trace, "PATCH": t.Method_Patch,
    }
    cls = known.get(name.upper())
    return cls() if cls else t.Method_Other(name)


def _kebab(value: Any) -> str:
    name = type(value).__name__.split("_", 1)[-1]
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def _describe(code: Any) -> str:
    """The error code's WIT name with its payload, e.g. ``connection-refused``."""
    name = _kebab(code)
    payload = getattr(code, "value", None)
    if name == "dns-error" and payload is not None and payload.rcode:
        return f"dns-error: {payload.rcode}"
    if name == "internal-error" and payload:
        return f"internal-error: {payload}"
    if name == "http-response-body-size" and payload is not None:
        return f"http-response-body-size: {payload} bytes"
    return name


_TIMEOUT = {"dns-timeout", "connection-timeout", "connection-read-timeout",
            "connection-write-timeout", "http-response-timeout"}
_CONNECTION = {"dns-error", "destination-not-found", "destination-unavailable",
               "destination-ip-unroutable", "connection-refused", "connection-terminated",
               "connection-limit-reached"}
_RETRY = {"dns-error", "destination-unavailable", "connection-refused",
          "connection-terminated", "connection-limit-reached"}


def _from_code(context: str, code: Any) -> Error:
    name = _kebab(code)
    if name == "http-request-denied":
        kind, what = "denied", _DENIED
    elif name == "destination-ip-prohibited":
        kind, what = "denied", "refused by the host: the destination address is not allowed"
    elif name in ("http-request-method-invalid", "http-request-uri-invalid", "http-request-uri-too-long"):
        kind, what = "invalid-request", _describe(code)
    elif name in _TIMEOUT:
        kind, what = "timeout", _describe(code)
    elif name in _CONNECTION:
        kind, what = "connection", _describe(code)
    elif name in ("internal-error", "configuration-error"):
        kind, what = "other", _describe(code)
    else:
        kind, what = "protocol", _describe(code)
    return Error(kind, f"{context}: {what}", kind == "timeout" or name in _RETRY)


def _from_stream(context: str, err: Any) -> Error:
    if type(err).__name__.endswith("Closed"):
        return Error("connection", f"{context}: connection closed early", True)
    from wit_world.imports import wasi_http_types as t

    io_error = err.value
    code = t.http_error_code(io_error)
    if code is not None:
        return _from_code(context, code)
    return Error("other", f"{context}: {io_error.to_debug_string()}")


# -- URLs -------------------------------------------------------------------

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*\Z")


def _split(url: str) -> Optional[Tuple[str, str, str, str]]:
    """``scheme://authority`` ``path`` ``?query`` of an absolute URL (fragment dropped)."""
    if any(c.isspace() or ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in url):
        return None
    url = url.split("#", 1)[0]
    if "://" not in url:
        return None
    scheme, rest = url.split("://", 1)
    if not _SCHEME.match(scheme):
        return None
    end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, rest = rest[:end], rest[end:]
    q = rest.find("?")
    path, query = (rest, "") if q < 0 else (rest[:q], rest[q:])
    return scheme, authority, path, query


def _target(url: str) -> Tuple[str, str, str]:
    parts = _split(url)
    if parts is None:
        raise Error("invalid-request", f"{json.dumps(url)} is not an absolute http or https URL")
    scheme, authority, path, query = parts
    scheme = scheme.lower()
    if scheme not in ("http", "https"):
        raise Error("invalid-request",
                    f"{json.dumps(url)}: unsupported scheme {json.dumps(scheme)} (use http or https)")
    if not authority or "@" in authority:
        raise Error("invalid-request", f"{json.dumps(url)}: the URL needs a host (and no user info)")
    return scheme, authority, (path or "/") + query


def resolve(base: str, reference: str) -> str:
    """Resolve ``reference`` (e.g. a redirect's ``Location``) against the absolute URL ``base``.

    As a browser would (RFC 3986 section 5); the fragment is dropped::

        resolve("https://example.com/docs/guide/intro?x=1", "../api")
        # 'https://example.com/docs/api'
    """
    def invalid(what: str) -> Error:
        return Error("invalid-request",
                     f"cannot resolve {json.dumps(reference)} against {json.dumps(base)}: {what}")

    base_parts = _split(base)
    if base_parts is None:
        raise invalid("the base is not an absolute URL")
    reference = reference.strip()
    if any(c.isspace() or ord(c) < 0x20 for c in reference):
        raise invalid("the reference contains whitespace")
    reference = reference.split("#", 1)[0]
    parts = _split(reference)
    if parts is not None:
        scheme, authority, path, query = parts
        return f"{scheme}://{authority}{_remove_dot_segments(path)}{query}"
    b_scheme, b_authority, b_path, b_query = base_parts
    origin = f"{b_scheme}://{b_authority}"
    if reference.startswith("//"):
        return resolve(base, f"{b_scheme}:{reference}")
    q = reference.find("?")
    ref_path, ref_query = (reference, "") if q < 0 else (reference[:q], reference[q:])
    if not ref_path:
        return f"{origin}{b_path or '/'}{ref_query or b_query}"
    if ref_path.startswith("/"):
        path = _remove_dot_segments(ref_path)
    else:
        base_path = b_path or "/"
        directory = base_path[: base_path.rfind("/") + 1]
        path = _remove_dot_segments(directory + ref_path)
    return f"{origin}{path}{ref_query}"


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 on an absolute path."""
    out: list = []
    segments = path.split("/")
    last = len(segments) - 1
    for i, segment in enumerate(segments):
        if segment in (".", ".."):
            if segment == ".." and len(out) > 1:
                out.pop()
            if i == last:  # a trailing dot segment still names a directory
                out.append("")
        else:
            out.append(segment)
    joined = "/".join(out)
    return joined if joined.startswith("/") else "/" + joined
