"""Key-value buckets over ``wasi:keyvalue`` (durable state shared by every session of a host).

A tool may open only the buckets its grant names (``kv = ["default"]`` in
``toolhost.toml``); a call whose effect is ``read`` may not write. Refusals
raise :class:`Error` (``kind == "access-denied"``), never trap::

    from toolhost import kv
    bucket = kv.open("default")
    visits = bucket.increment("visits")
    bucket.set_json("last", {"who": "ana"})
"""

from __future__ import annotations

import json
from typing import Any, Optional, Union

__all__ = ["Error", "Bucket", "open"]

_MESSAGES = {
    "no-such-store": "key-value: no such bucket",
    "access-denied": (
        "key-value: access denied (the bucket is not granted to this tool, "
        "or this call may not write)"
    ),
}


class Error(Exception):
    """A key-value operation failed. ``kind``: ``no-such-store``, ``access-denied`` or ``other``."""

    def __init__(self, kind: str, message: Optional[str] = None) -> None:
        self.kind = kind
        text = _MESSAGES.get(kind) or f"key-value: {message}"
        super().__init__(text)


def _call(fn: Any, *args: Any) -> Any:
    from componentize_py_types import Err

    try:
        return fn(*args)
    except Err as err:
        value = err.value
        name = type(value).__name__
        if name.endswith("NoSuchStore"):
            raise Error("no-such-store") from None
        if name.endswith("AccessDenied"):
            raise Error("access-denied") from None
        raise Error("other", getattr(value, "value", repr(value))) from None


class Bucket:
    """An open bucket: a named collection of keys and byte values."""

    def __init__(self, raw: Any, name: str) -> None:
        self.raw = raw
        """The ``wasi:keyvalue/store`` bucket resource, for batch and CAS calls."""
        self.name = name

    def get(self, key: str) -> Optional[bytes]:
        """The value of ``key``, or None when it is absent."""
        return _call(self.raw.get, key)

    def set(self, key: str, value: Union[bytes, str]) -> None:
        """Set ``key`` to ``value`` (a str is stored as UTF-8)."""
        data = value.encode() if isinstance(value, str) else bytes(value)
        _call(self.raw.set, key, data)

    def delete(self, key: str) -> None:
        """Remove ``key``; removing an absent key is not an error."""
        _call(self.raw.delete, key)

    def exists(self, key: str) -> bool:
        """Whether ``key`` is present."""
        return _call(self.raw.exists, key)

    def increment(self, key: str, delta: int = 1) -> int:
        """Atomically add ``delta`` to the signed 64-bit integer at ``key`` (absent = 0); the new value."""
        from wit_world.imports import atomics

        return _call(atomics.increment, self.raw, key, delta)

    def keys(self) -> list[str]:
        """Every key in the bucket (follows the store's pages)."""
        keys: list[str] = []
        cursor: Optional[str] = None
        while True:
            page = _call(self.raw.list_keys, cursor)
            keys.extend(page.keys)
            if page.cursor is None or page.cursor == cursor:
                return keys
            cursor = page.cursor

    def get_json(self, key: str) -> Any:
        """The value of ``key`` decoded from JSON, or None when absent."""
        data = self.get(key)
        if data is None:
            return None
        try:
            return json.loads(data)
        except ValueError as err:
            raise Error("other", f"value of {json.dumps(key)} is not valid JSON: {err}") from None

    def set_json(self, key: str, value: Any) -> None:
        """Set ``key`` to ``value`` encoded as JSON."""
        self.set(key, json.dumps(value, separators=(",", ":")).encode())

    def close(self) -> None:
        """Release the bucket handle (also done when the object is collected)."""
        self.raw.__exit__(None, None, None)

    def __enter__(self) -> "Bucket":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open(name: str = "default") -> Bucket:  # noqa: A001 - mirrors wasi:keyvalue/store.open
    """Open the bucket ``name``; raises :class:`Error` when it is not granted."""
    from wit_world.imports import store

    return Bucket(_call(store.open, name), name)
