"""Typed ``sdgym train`` options generated from the config's sections and the heads' knobs.

Every scalar or list field of a section is an option ``--<section>.<field-with-dashes>``
(``--sft.steps 200``, ``--grpo.kl-coef 0.01``, ``--rollout.pool ray``, ``--infra.sharding fsdp``),
and every knob of a registered head is ``--head.<knob>`` (``--head.teacher-weights frozen``).
The value is read as the field's type hint says (``int``, ``float``, ``true``/``false``, a string,
``none`` for an optional field, a comma-separated list); a bad one is a one-line error naming the
option. Table fields (``env_kwargs``, ``rollout.prompt``, ``model.tiny``, …) are set one key at a
time with ``--set env.size=small``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import textwrap
import types
import typing
from typing import Any

from baselines.config import SECTIONS, field_hint
from baselines.typecheck import describe

PREFIX = "config:"
"""Namespace attributes of the generated options: ``config:sft.steps``."""


def _is_option(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return not (hint is dict or origin is dict or dataclasses.is_dataclass(hint))


def head_knobs() -> dict[str, Any]:
    """``{knob: type hint}`` over every registered head's knobs (its dataclass fields; ``Any``
    where two heads disagree on the type)."""
    from baselines.heads import HEADS, Head, available_heads
    from baselines.heads.base import knob_names

    available_heads()  # loads every head module
    knobs: dict[str, Any] = {}
    for cls in [Head, *HEADS.values()]:
        hints = typing.get_type_hints(cls)
        for name in knob_names(cls):
            hint = hints.get(name, Any)
            knobs[name] = hint if knobs.get(name, hint) == hint else Any
    return knobs


def head_knob_help() -> dict[str, str]:
    """``{knob: help}``: the knob's field docstring (when every head that documents it says the
    same) and the heads that have it."""
    from baselines.heads import HEADS, Head, available_heads
    from baselines.heads.base import knob_names

    docs: dict[str, set[str]] = {}
    owners: dict[str, list[str]] = {}
    for cls in [Head, *(HEADS[name] for name in available_heads())]:
        for knob, doc in field_docs(cls).items():
            docs.setdefault(knob, set()).add(doc)
        if cls is not Head:
            for knob in knob_names(cls):
                owners.setdefault(knob, []).append(cls.name)
    every = len(available_heads())
    helps = {}
    for knob, names in owners.items():
        texts = docs.get(knob, set())
        text = next(iter(texts)) if len(texts) == 1 else "its meaning differs by head"
        heads = "all" if len(names) == every else ", ".join(names)
        helps[knob] = f"{text} (heads: {heads}; docs/training.md)"
    return helps


def field_docs(cls: type) -> dict[str, str]:
    """``{field: its docstring}`` of a dataclass: the string literal under each field, as the
    config classes document their fields (TRL's ``grpo_config.py`` style), whitespace folded."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    except (OSError, TypeError, IndexError):
        return {}
    docs = {}
    body = getattr(tree, "body", [])
    for item, after in zip(body, body[1:]):
        if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            docs[item.target.id] = " ".join(after.value.value.replace("``", "").split())
    return docs


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """Add one option per section field and head knob (see the module docstring); each help
    text is the field's docstring, its type and its default."""
    group = parser.add_argument_group(
        "config options", "one field each (as in the preset's tables); tables: --set KEY=VALUE")
    for section, cls in SECTIONS.items():
        docs = field_docs(cls)
        for item in dataclasses.fields(cls):
            hint = field_hint(f"{section}.{item.name}")
            if _is_option(hint):
                _add(group, f"{section}.{item.name}", hint, _default_text(item),
                     docs.get(item.name, ""))
    helps = head_knob_help()
    for knob, hint in sorted(head_knobs().items()):
        _add(group, f"head.{knob}", hint, "the head's default", helps.get(knob, ""))


def _default_text(item: dataclasses.Field) -> str:
    if item.default is not dataclasses.MISSING:
        return repr(item.default)
    return repr(item.default_factory())  # type: ignore[misc]


def _add(group: argparse._ArgumentGroup, path: str, hint: Any, default: str, doc: str) -> None:
    section, name = path.split(".", 1)
    doc = doc.replace("%", "%%")  # argparse formats help with %
    group.add_argument(f"--{section}.{name.replace('_', '-')}", dest=PREFIX + path,
                       default=argparse.SUPPRESS, metavar=_metavar(hint),
                       help=f"{doc + ' ' if doc else ''}[{describe(hint)}; default: the "
                            f"preset's, else {default.replace('%', '%%')}]")


def _metavar(hint: Any) -> str:
    if typing.get_origin(hint) is list:
        return "A,B,..."
    return {int: "N", float: "X", bool: "true|false"}.get(hint, "VALUE")


def config_settings(args: argparse.Namespace) -> dict[str, Any]:
    """``{dotted path: typed value}`` of the generated options given on the command line."""
    knobs = None
    settings = {}
    for key, text in vars(args).items():
        if not key.startswith(PREFIX):
            continue
        path = key.removeprefix(PREFIX)
        section, name = path.split(".", 1)
        if section == "head":
            knobs = head_knobs() if knobs is None else knobs
            hint = knobs[name]
        else:
            hint = field_hint(path)
        settings[path] = parse_value(text, hint, f"--{section}.{name.replace('_', '-')}")
    return settings


_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


def parse_value(text: str, hint: Any, option: str) -> Any:
    """``text`` read as type ``hint`` (see the module docstring); ValueError naming ``option``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if text.lower() in ("none", "null") and type(None) in args:
            return None
        for inner in (a for a in args if a is not type(None)):
            try:
                return parse_value(text, inner, option)
            except ValueError:
                continue
        raise ValueError(f"{option}: expected {describe(hint)}, got {text!r}")
    if origin is list:
        inner = args[0] if args else str
        return [parse_value(part.strip(), inner, option) for part in text.split(",")
                if part.strip()]
    try:
        if hint is bool:
            if text.lower() not in (*_TRUE, *_FALSE):
                raise ValueError
            return text.lower() in _TRUE
        if hint is int:
            return int(text)
        if hint is float:
            return float(text)
    except ValueError:
        raise ValueError(f"{option}: expected {describe(hint)}, got {text!r}") from None
    if hint is Any:
        from sdgym.cli import parse_env_kwargs

        return parse_env_kwargs([f"value={text}"])["value"]
    return text
