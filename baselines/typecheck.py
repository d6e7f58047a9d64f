"""Check a dataclass's field values against its type hints (presets are TOML: any type may arrive).

``check_fields(config)`` raises one ``ValueError`` line naming the first wrong field, e.g.
``seeds must be a list of integers, got '0'``. Supported hints: ``int``, ``float`` (an int is a
number too), ``str``, ``bool``, ``Any``, ``X | None``, ``list[X]``, ``dict[K, V]`` and nested
dataclasses (checked by their own ``__post_init__``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
_PLURAL = {int: "integers", float: "numbers", str: "strings", bool: "booleans"}


def field_default(item: dataclasses.Field) -> Any:
    """A dataclass field's default value (made by its ``default_factory`` where it has one)."""
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return item.default


def describe(hint: Any) -> str:
    """``list[int]`` → ``"a list of integers"`` (for error messages)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("None" if a is type(None) else describe(a) for a in args)
    if origin is list:
        return f"a list of {_PLURAL.get(args[0], describe(args[0]))}" if args else "a list"
    if origin is dict or hint is dict:
        return "a table"
    return _NAMES.get(hint, getattr(hint, "__name__", str(hint)))


def matches(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of type ``hint`` (see the module docstring)."""
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(matches(value, a) for a in args)
    if origin is list:
        return isinstance(value, list) and all(matches(v, args[0]) for v in value) if args \
            else isinstance(value, list)
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            return False
        return not args or all(matches(k, args[0]) and matches(v, args[1])
                               for k, v in value.items())
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True  # a hint this checker does not know: not checked


def check_fields(instance: Any, prefix: str = "") -> None:
    """Raise ``ValueError`` naming the first field of the dataclass ``instance`` whose value does
    not match its type hint (``prefix`` goes before the name, e.g. ``"grpo."``)."""
    hints = typing.get_type_hints(type(instance))
    for item in dataclasses.fields(instance):
        value = getattr(instance, item.name)
        hint = hints[item.name]
        if dataclasses.is_dataclass(hint):
            continue
        if not matches(value, hint):
            raise ValueError(f"{prefix}{item.name} must be {describe(hint)}, got {value!r}")
