"""What the helpers of the host's own interfaces share: finding an interface's
bindings, and turning its refusals into the helper's exception."""

from __future__ import annotations

import importlib
from typing import Any, Type


def bindings(interface: str, error: Type[Exception], outside: str) -> Any:
    """The bindings of ``interface`` (``wit_world.imports.<interface>``); outside a
    component there are none, and ``error(outside)`` is raised."""
    try:
        return importlib.import_module(f"wit_world.imports.{interface}")
    except ImportError:
        raise error(outside) from None


def call(error: Type[Exception], operation: Any, *args: Any) -> Any:
    """``operation(*args)``, its ``Err`` (the host's refusal, a string) raised as
    ``error``."""
    from componentize_py_types import Err

    try:
        return operation(*args)
    except Err as err:
        raise error(str(err.value)) from None
