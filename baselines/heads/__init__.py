"""Teacher heads: one small module per self-distillation method, and a registry by name.

A head in this package is one module whose class carries ``@register_head`` over
``@dataclass(kw_only=True)``: its knobs are the dataclass's fields (:class:`Head`). An installed
package adds a head without editing sdgym by naming its :class:`Head` subclass in the
entry-point group :data:`HEAD_ENTRY_POINTS` (``sdgym.heads``), e.g. in its ``pyproject.toml``::

    [project.entry-points."sdgym.heads"]
    my_head = "my_package.heads:MyHead"

``sdgym train --method my_head`` (and a benchmark preset's ``methods``) then use it.
"""

from __future__ import annotations

import functools
from typing import Any

from baselines.heads.base import Head, HeadBatch, HeadOutput, is_declared_head, knob_names
from baselines.heads.grpo import GRPOHead

HEADS: dict[str, type[Head]] = {"grpo": GRPOHead}


class UnknownKnobError(ValueError, TypeError):
    """A knob the head does not have (a ValueError; also a TypeError, which an unexpected
    keyword argument raised before the heads were dataclasses)."""


def register_head(cls: type[Head]) -> type[Head]:
    """Class decorator: add a head to :data:`HEADS` under ``cls.name`` (place it above
    ``@dataclass(kw_only=True)``)."""
    if not is_declared_head(cls):
        raise ValueError(f"head {cls.__qualname__} must be a Head subclass declared with "
                         "@dataclass(kw_only=True) under @register_head (its knobs are its fields)")
    HEADS[cls.name] = cls
    return cls


def make_head(name: str, **kwargs: Any) -> Head:
    """Instantiate head ``name`` with its knobs (defaults: the paper's). An unknown name or knob
    is a ValueError; so is a bad knob value (the head's ``__post_init__``)."""
    _load_all()
    if name not in HEADS:
        raise ValueError(f"unknown method {name!r}; choose from {sorted(HEADS)}")
    knobs = knob_names(HEADS[name])
    unknown = [key for key in kwargs if key not in knobs]
    if unknown:
        raise UnknownKnobError(f"method {name!r} has no knob {', '.join(map(repr, unknown))} "
                               f"(its knobs: {', '.join(knobs)})")
    return HEADS[name](**kwargs)


def available_heads() -> list[str]:
    """Names of every registered method (``grpo`` first)."""
    _load_all()
    return ["grpo", *sorted(n for n in HEADS if n != "grpo")]


def shipped_heads() -> list[str]:
    """The heads sdgym ships, in their :attr:`Head.row` order (``grpo`` first): what a
    benchmark preset's ``methods = "all"`` runs. Heads added by other packages are left out
    (name them in ``methods``)."""
    _load_all()
    rows = {name: cls.row for name, cls in HEADS.items() if cls.row is not None}
    return sorted(rows, key=lambda name: (rows[name], name))


def _combine(head: Head) -> str:
    if head.scope == "batch":
        return "reshapes A (whole batch)"
    if head.replaces_loss:
        return "replaces L0"
    return "adds to L0" if head.needs_teacher else "L0"


def _defaults(head: Head) -> str:
    config = head.config()
    keys = [k for k in head.reference if k in config and k not in ("teacher_weights",)]
    return ", ".join(f"{k}={config[k]}" for k in keys) or "—"


def reference_table() -> str:
    """Markdown table of every head: reference code, default teacher/context, and the deviations
    from the reference that a run with the head's defaults records (trainer options aside)."""
    lines = ["| head | combines | teacher / context | defaults | reference | deviations at defaults |",
             "|---|---|---|---|---|---|"]
    shipped = shipped_heads()
    for name in [*shipped, *(n for n in available_heads() if n not in shipped)]:
        head = make_head(name)
        teacher = f"{head.teacher_weights} / {head.context}" if head.needs_teacher else "—"
        deviations = "; ".join(head.deviations()) or "none"
        lines.append(f"| `{name}` | {_combine(head)} | {teacher} | {_defaults(head)} | "
                     f"{head.source} | {deviations} |")
    return "\n".join(lines)


HEAD_ENTRY_POINTS = "sdgym.heads"
"""Entry-point group through which installed packages add heads (each a Head subclass)."""


@functools.cache
def _load_all() -> None:
    """Import every head module of this package, then every installed package's head."""
    import importlib
    import pkgutil
    from importlib.metadata import entry_points

    import baselines.heads as package

    for module in pkgutil.iter_modules(package.__path__):
        if module.name not in ("base", "grpo"):
            importlib.import_module(f"baselines.heads.{module.name}")
    for point in sorted(entry_points(group=HEAD_ENTRY_POINTS), key=lambda p: p.name):
        head = point.load()
        if not (isinstance(head, type) and issubclass(head, Head) and head.name):
            raise ValueError(f"entry point {point.name!r} ({point.value}) in group "
                             f"{HEAD_ENTRY_POINTS!r} is not a Head subclass with a name")
        if not is_declared_head(head):
            raise ValueError(f"entry point {point.name!r} ({point.value}) in group "
                             f"{HEAD_ENTRY_POINTS!r} is not declared with @dataclass(kw_only=True) "
                             "(a head's knobs are its dataclass fields)")
        if HEADS.get(head.name, head) is not head:
            raise ValueError(f"entry point {point.name!r} ({point.value}) registers head "
                             f"{head.name!r}, which {HEADS[head.name].__module__} already has")
        HEADS[head.name] = head


__all__ = ["HEADS", "GRPOHead", "HeadBatch", "HeadOutput", "Head", "UnknownKnobError",
           "available_heads", "make_head", "reference_table", "register_head", "shipped_heads"]
