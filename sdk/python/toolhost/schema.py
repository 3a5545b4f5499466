"""JSON Schema from Python types, and JSON values back into those types.

Supported: ``str``, ``int``, ``float``, ``bool``, ``list[T]``, ``dict`` /
``dict[str, T]``, ``Optional[T]`` (``T | None``), ``Literal[...]`` (an
``enum``), ``enum.Enum`` subclasses, ``typing.Any``, nested dataclasses and
TypedDicts. Descriptions and constraints come from ``Annotated``::

    name: Annotated[str, "The counter's name.", Field(min_length=1, max_length=256)]
    count: Annotated[int, Field(description="How many.", ge=1, le=100)] = 10

or from ``dataclasses.field(metadata={"description": ...})``. A string (or a
PEP 727 ``Doc``) in ``Annotated`` is the description.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from dataclasses import MISSING
from typing import Any, Literal, Optional, Union, get_args, get_origin

__all__ = ["Field", "schema_of", "convert"]

_JSON_SCHEMA = "https://json-schema.org/draft/2020-12/schema"


@dataclasses.dataclass(frozen=True)
class Field:
    """Description and constraints of one input property, for ``Annotated``.

    Each set value becomes the JSON Schema keyword of the same meaning:
    ``min_length``/``max_length`` (strings), ``ge``/``le``/``gt``/``lt``
    (numbers: ``minimum``, ``maximum``, ``exclusiveMinimum``,
    ``exclusiveMaximum``), ``min_items``/``max_items`` (lists), ``pattern``
    (a regular expression), ``examples``.
    """

    description: Optional[str] = None
    min_length: Optional[int] = None
    max_length: Optional[int] = None
    ge: Optional[float] = None
    le: Optional[float] = None
    gt: Optional[float] = None
    lt: Optional[float] = None
    min_items: Optional[int] = None
    max_items: Optional[int] = None
    pattern: Optional[str] = None
    examples: Optional[list] = None

    def keywords(self) -> dict[str, Any]:
        """The JSON Schema keywords this marker sets."""
        names = {
            "description": "description",
            "min_length": "minLength",
            "max_length": "maxLength",
            "ge": "minimum",
            "le": "maximum",
            "gt": "exclusiveMinimum",
            "lt": "exclusiveMaximum",
            "min_items": "minItems",
            "max_items": "maxItems",
            "pattern": "pattern",
            "examples": "examples",
        }
        return {
            keyword: getattr(self, attr)
            for attr, keyword in names.items()
            if getattr(self, attr) is not None
        }


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__")


def _is_union(origin: Any) -> bool:
    return origin is Union or origin is getattr(types, "UnionType", Union)


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


def _class_doc(cls: type) -> Optional[str]:
    """A class's own docstring, not the signature dataclasses make up."""
    doc = cls.__dict__.get("__doc__")
    if not doc or doc.startswith(cls.__name__ + "("):
        return None
    from .text import dedent

    return dedent(doc)


def _annotations(meta: tuple) -> dict[str, Any]:
    """Schema keywords from ``Annotated`` metadata."""
    out: dict[str, Any] = {}
    for item in meta:
        if isinstance(item, str):
            out["description"] = item
        elif isinstance(item, Field):
            out.update(item.keywords())
        elif isinstance(getattr(item, "documentation", None), str):  # PEP 727 Doc
            out["description"] = item.documentation
        elif isinstance(item, dict):
            out.update(item)
    return out


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def schema_of(tp: Any, *, root: bool = True) -> dict[str, Any]:
    """The JSON Schema of ``tp``; at the root, with ``$schema``."""
    schema = _schema(tp)
    if root:
        schema = {"$schema": _JSON_SCHEMA, **schema}
    return schema


def _object_schema(cls: type) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    hints = _hints(cls)
    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            prop = _schema(hints.get(f.name, Any))
            if "description" in f.metadata:
                prop = {"description": f.metadata["description"], **prop}
            if f.default is not MISSING:
                prop["default"] = _json_default(f.default)
            elif f.default_factory is not MISSING:  # type: ignore[misc]
                prop["default"] = _json_default(f.default_factory())  # type: ignore[misc]
            else:
                required.append(f.name)
            properties[f.name] = prop
    else:  # TypedDict
        for name, hint in hints.items():
            properties[name] = _schema(hint)
            if name in cls.__required_keys__:
                required.append(name)
    schema: dict[str, Any] = {}
    doc = _class_doc(cls)
    if doc:
        schema["description"] = doc
    schema.update(type="object", properties=properties)
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _schema(tp: Any) -> dict[str, Any]:
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is typing.Annotated:
        inner = _schema(args[0])
        extra = _annotations(args[1:])
        if "description" in extra:
            return {"description": extra.pop("description"), **inner, **extra}
        return {**inner, **extra}
    if tp is Any or tp is object:
        return {}
    if tp is type(None) or tp is None:
        return {"type": "null"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if _is_union(origin):
        arms = [a for a in args if a is not type(None)]
        nullable = len(arms) < len(args)
        schemas = [_schema(a) for a in arms]
        if len(schemas) == 1 and nullable and isinstance(schemas[0].get("type"), str):
            only = dict(schemas[0])
            only["type"] = [only["type"], "null"]
            if "enum" in only:
                only["enum"] = [*only["enum"], None]
            return only
        if nullable:
            schemas.append({"type": "null"})
        return {"anyOf": schemas}
    if origin is Literal:
        values = [_json_default(v) for v in args]
        return _enum_schema(values)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum_schema([m.value for m in tp])
    if tp in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset, typing.Sequence):
        schema: dict[str, Any] = {"type": "array"}
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if args:
                schema["prefixItems"] = [_schema(a) for a in args]
                schema["minItems"] = schema["maxItems"] = len(args)
        elif args:
            schema["items"] = _schema(args[0])
        return schema
    if tp is dict or origin in (dict, typing.Mapping):
        schema = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            schema["additionalProperties"] = _schema(args[1])
        return schema
    if isinstance(tp, type) and (dataclasses.is_dataclass(tp) or _is_typeddict(tp)):
        return _object_schema(tp)
    raise TypeError(f"toolhost: no JSON Schema for type {tp!r}")


def _enum_schema(values: list) -> dict[str, Any]:
    kinds = {type(v) for v in values}
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    schema: dict[str, Any] = {}
    if len(kinds) == 1 and next(iter(kinds)) in names:
        schema["type"] = names[next(iter(kinds))]
    schema["enum"] = values
    return schema


def convert(value: Any, tp: Any) -> Any:
    """Turn a JSON value (already valid against ``schema_of(tp)``) into ``tp``.

    Dataclasses are constructed (missing properties take their defaults),
    enums looked up by value, integers widened to ``float`` where a float is
    expected; everything else passes through.
    """
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is typing.Annotated:
        return convert(value, args[0])
    if value is None:
        return None
    if _is_union(origin):
        arms = [a for a in args if a is not type(None)]
        if len(arms) == 1:
            return convert(value, arms[0])
        for arm in arms:  # first arm whose shape matches
            if _matches(value, arm):
                return convert(value, arm)
        return value
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    if origin in (list, typing.Sequence) and args and isinstance(value, list):
        return [convert(v, args[0]) for v in value]
    if origin is tuple and isinstance(value, list):
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(v, args[0]) for v in value)
        return tuple(value)
    if origin in (set, frozenset) and isinstance(value, list):
        return origin(convert(v, args[0]) if args else v for v in value)
    if origin in (dict, typing.Mapping) and len(args) == 2 and isinstance(value, dict):
        return {k: convert(v, args[1]) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and isinstance(value, dict):
        hints = _hints(tp)
        names = {f.name for f in dataclasses.fields(tp) if f.init}
        unknown = sorted(set(value) - names)
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)}")
        return tp(**{k: convert(v, hints.get(k, Any)) for k, v in value.items()})
    if _is_typeddict(tp) and isinstance(value, dict):
        hints = _hints(tp)
        return {k: convert(v, hints.get(k, Any)) for k, v in value.items()}
    return value


def _matches(value: Any, tp: Any) -> bool:
    base = get_args(tp)[0] if get_origin(tp) is typing.Annotated else tp
    origin = get_origin(base) or base
    if isinstance(origin, type) and (dataclasses.is_dataclass(origin) or _is_typeddict(origin)):
        return isinstance(value, dict)
    if origin in (list, tuple, set, frozenset):
        return isinstance(value, list)
    if origin is dict:
        return isinstance(value, dict)
    if origin is Literal:
        return value in get_args(base)
    if origin is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(origin, type) and issubclass(origin, enum.Enum):
        return any(m.value == value for m in origin)
    if isinstance(origin, type):
        return isinstance(value, origin)
    return True
