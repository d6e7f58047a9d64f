"""Memoisation for TextWorld's PDDL text generator (same output, an order of magnitude faster).

Profiling a step of ``textworld.envs.pddl`` shows most of the time in re-parsing the same few
grammar strings with TatSu (every admissible command and every feedback is derived from a
template string) and in ``copy.deepcopy`` of symbols and contexts. This module patches
``textworld.envs.pddl.textgen``:

* ``_parse_and_convert`` is memoised per ``(text, rule)``; callers get a fresh structural copy
  of the parsed symbols (they mutate ``symbol.context``);
* ``Rule.parse_conjunctive_query`` (grammar conditions) is memoised per expression;
* the module's ``deepcopy`` (used on symbols and on the ``variables``/``mapping`` dicts of a
  context) is replaced by a structural copy: symbols are cloned, dicts and lists copied, and the
  leaves (``EntityInfo``, ``Variable``, ``Placeholder``, strings), which derivation never
  mutates, shared.

It also memoises ``fast_downward.pddl2sas`` (the PDDL -> SAS translator, run twice by every
``load`` and again by every ``reset``: seconds on a large room) per ``(domain, problem,
options)``; TextWorld only reads the translated task.

:func:`patched` installs the patch for the duration of a ``with`` block and then restores what
was there: sdgym's ALFWorld engine calls (load, reset, step, expert) run inside it, so other
TextWorld users in the process, before, between and after those calls and after ``close()``,
see TextWorld unpatched. :func:`set_enabled` switches it on or off for good.
``tests/envs/alfworld`` checks that whole trajectories (observations and admissible commands)
are byte-identical either way.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

_ORIGINALS: dict[str, Any] = {}


def _clone(value: Any) -> Any:
    """Structural copy of grammar symbols and containers; other leaves are shared."""
    from textworld.envs.pddl import textgen

    if isinstance(value, list):
        return [_clone(item) for item in value]
    if isinstance(value, dict):
        return {key: _clone(item) for key, item in value.items()}
    if isinstance(value, textgen.Symbol):
        clone = object.__new__(type(value))
        clone.__dict__.update(value.__dict__)
        for attribute in ("symbol", "expression"):
            inner = clone.__dict__.get(attribute)
            if isinstance(inner, textgen.Symbol):
                clone.__dict__[attribute] = _clone(inner)
        # A fresh symbol's context is the shared ``{}`` default or a context that derivation
        # replaces before use; containers inside it are copied as upstream's deepcopy would.
        context = clone.__dict__.get("context")
        if isinstance(context, dict) and context:
            clone.context = {
                key: (dict(item) if key in ("variables", "mapping") else item)
                for key, item in context.items()
            }
        return clone
    return value


def _fast_deepcopy(value: Any, memo: Any = None) -> Any:
    from textworld.envs.pddl import textgen

    if isinstance(value, (list, dict, textgen.Symbol)):
        return _clone(value)
    return copy.deepcopy(value, memo)


class _MemoRule:
    """Stands in for ``textworld.logic.Rule`` inside ``textgen``: memoised query parsing."""

    @staticmethod
    @lru_cache(maxsize=4096)
    def parse_conjunctive_query(expression: str) -> Any:
        return _ORIGINALS["Rule"].parse_conjunctive_query(expression)


@lru_cache(maxsize=16)
def _memo_pddl2sas(domain: str, problem: str, verbose: bool = False, optimize: bool = False) -> Any:
    return _ORIGINALS["pddl2sas"](domain, problem, verbose=verbose, optimize=optimize)


@lru_cache(maxsize=8192)
def _parsed(text: str, rule_name: str, trace: bool) -> Any:
    return _ORIGINALS["_parse_and_convert"](text, rule_name=rule_name, trace=trace)


def _memo_parse_and_convert(text: str, rule_name: str = "symbols", trace: bool = False) -> Any:
    return _clone(_parsed(text, rule_name, bool(trace)))


def set_enabled(enabled: bool) -> None:
    """Install (``True``) or remove (``False``) the memoisation; idempotent."""
    import fast_downward
    from textworld.envs.pddl import textgen

    if not _ORIGINALS:
        _ORIGINALS.update(
            _parse_and_convert=textgen._parse_and_convert,
            deepcopy=textgen.deepcopy,
            Rule=textgen.Rule,
            pddl2sas=fast_downward.pddl2sas,
        )
    if enabled:
        textgen._parse_and_convert = _memo_parse_and_convert
        textgen.deepcopy = _fast_deepcopy
        textgen.Rule = _MemoRule
        fast_downward.pddl2sas = _memo_pddl2sas
    else:
        textgen._parse_and_convert = _ORIGINALS["_parse_and_convert"]
        textgen.deepcopy = _ORIGINALS["deepcopy"]
        textgen.Rule = _ORIGINALS["Rule"]
        fast_downward.pddl2sas = _ORIGINALS["pddl2sas"]


def enabled() -> bool:
    """Whether the memoisation is installed."""
    from textworld.envs.pddl import textgen

    return textgen._parse_and_convert is _memo_parse_and_convert


@contextlib.contextmanager
def patched(enable: bool = True) -> Iterator[None]:
    """Memoisation on (``enable``) or off inside the block; the previous state after it.

    Not thread-safe: TextWorld itself is not, so one thread drives one engine at a time."""
    before = enabled() if _ORIGINALS else False
    set_enabled(enable)
    try:
        yield
    finally:
        set_enabled(before)
