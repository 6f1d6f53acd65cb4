"""Results as JSON with a type tag, so the store survives the types growing (or losing) fields.

    encode(build_result) -> '{"type": "kerntailor.builder.types.BuildResult", "data": {...}}'
    decode(text)         -> BuildResult(...), or the plain dict when the type cannot be rebuilt

Decoding drops fields the type no longer has, lets new fields take their defaults, and rebuilds nested
dataclasses and tuples from the field annotations. Only types under `kerntailor.` are imported by tag.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import types
import typing
from collections.abc import Mapping
from typing import Any

DICT_TAG = "dict"


def type_tag(value: Any) -> str:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        return f"{cls.__module__}.{cls.__qualname__}"
    return DICT_TAG


def plain(value: Any) -> Any:
    """A JSON-ready copy of `value`: dataclasses via asdict, mappings as dicts, tuples as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "to_dict"):
        return plain(value.to_dict())
    return str(value)  # torch.dtype, Path, enum: kept readable, not rebuilt


def encode(value: Any) -> str:
    """`value` (a dataclass, a mapping, or None) as tagged JSON text."""
    data = {} if value is None else plain(value)
    return json.dumps({"type": type_tag(value), "data": data}, separators=(",", ":"))


def decode_parts(text: str) -> tuple[str, Any]:
    obj = json.loads(text)
    return obj.get("type", DICT_TAG), obj.get("data")


def decode(text: str | None) -> Any:
    """The object `encode` was given, rebuilt where its type still exists; else its plain data."""
    if text is None:
        return None
    tag, data = decode_parts(text)
    cls = _resolve(tag)
    if cls is None or not isinstance(data, dict):
        return data
    try:
        return _build(cls, data)
    except (TypeError, ValueError, KeyError, NameError):
        return data


def _resolve(tag: str) -> type | None:
    if not tag.startswith("kerntailor."):
        return None
    module, _, name = tag.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    return cls if dataclasses.is_dataclass(cls) else None


def _build(cls: type, data: dict[str, Any]) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.init and f.name in data:
            kwargs[f.name] = _coerce(hints.get(f.name, Any), data[f.name])
    return cls(**kwargs)


def _coerce(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if dataclasses.is_dataclass(hint) and isinstance(value, dict):
        return _build(hint, value)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            if arg is type(None):
                continue
            if dataclasses.is_dataclass(arg) and isinstance(value, dict):
                return _build(arg, value)
            if typing.get_origin(arg) is tuple and isinstance(value, list):
                return _coerce(arg, value)
        return value
    if hint is tuple and isinstance(value, list):
        return tuple(value)
    if origin is tuple and isinstance(value, list):
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(args[0], v) for v in value)
        if args and len(args) == len(value):
            return tuple(_coerce(a, v) for a, v in zip(args, value))
        return tuple(value)
    return value
