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

Loading a game parses its grammar document (``alfred.twl2`` with the task's goal sentence, as
alfworld writes it) with TatSu; ``textworld.envs.pddl.logic._parse_and_convert`` is memoised on
the document with the goal put back to alfworld's ``UNKNOWN GOAL`` placeholder, and the goal is
substituted while converting (the placeholder is inside a JSON string of a code block the parser
does not look into), so every game of a process shares one parse.

It also memoises ``fast_downward.pddl2sas`` (the PDDL -> SAS translator, run twice by every
``load`` and again by every ``reset``: seconds on a large room) per ``(domain, problem,
options)``, in memory and on disk (:mod:`.translation_cache`, so a game's first load in a new
process skips it too); TextWorld only reads the translated task.

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
import re
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Any

from sdgym.envs.alfworld import translation_cache

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
        return _original("textworld.envs.pddl.textgen", "Rule").parse_conjunctive_query(expression)


@lru_cache(maxsize=16)
def _memo_pddl2sas(domain: str, problem: str, verbose: bool = False, optimize: bool = False) -> Any:
    return translation_cache.translate(domain, problem, verbose=verbose, optimize=optimize)


@lru_cache(maxsize=8192)
def _parsed(text: str, rule_name: str, trace: bool) -> Any:
    return _original("textworld.envs.pddl.textgen", "_parse_and_convert")(text, rule_name=rule_name, trace=trace)


GOAL_PLACEHOLDER = "UNKNOWN GOAL"
"""What alfworld's grammar template holds where each game's goal sentence goes."""

_GOAL_LINE = re.compile(r'"Your task is to: ([^"\\\n]*)\."')


def goal_template(text: str) -> tuple[str, str] | None:
    """``(template, goal)`` with ``template.replace(GOAL_PLACEHOLDER, goal) == text``, if ``text``
    holds exactly one goal line (and no placeholder); else ``None``."""
    if GOAL_PLACEHOLDER in text:
        return None
    matches = list(_GOAL_LINE.finditer(text))
    if len(matches) != 1:
        return None
    start, end = matches[0].span(1)
    return text[:start] + GOAL_PLACEHOLDER + text[end:], matches[0].group(1)


@lru_cache(maxsize=8)
def _document_model(template: str, rule_name: str) -> Any:
    from textworld.envs.pddl import logic

    return logic._PARSER.parse(template, rule_name=rule_name)


@cache
def _goal_converter() -> type:
    from textworld.envs.pddl import logic

    class GoalConverter(logic._ModelConverter):
        """TextWorld's converter, with the goal sentence put into the code blocks it reads."""

        def __init__(self, goal: str) -> None:
            super().__init__()
            self.goal, self.substituted = goal, 0

        def _unescape_block(self, string: str) -> str:
            block = super()._unescape_block(string)
            self.substituted += block.count(GOAL_PLACEHOLDER)
            return block.replace(GOAL_PLACEHOLDER, self.goal)

    return GoalConverter


def _memo_logic_parse(text: str, rule_name: str = "pddlStart", **kwargs: Any) -> Any:
    split = goal_template(text) if not kwargs else None
    if split is None:
        return _original("textworld.envs.pddl.logic", "_parse_and_convert")(text, rule_name=rule_name, **kwargs)
    template, goal = split
    converter = _goal_converter()(goal)
    converted = converter.walk(_document_model(template, rule_name))
    if converter.substituted != 1:  # the goal line was not inside a code block: parse as is
        return _original("textworld.envs.pddl.logic", "_parse_and_convert")(text, rule_name=rule_name)
    return converted


def _load_keeping_state(self: Any, *args: Any, **kwargs: Any) -> None:
    """``PddlEnv.load``, remembering the initial state it built for the reset that follows."""
    _original("PddlEnv", "load")(self, *args, **kwargs)
    self._sdgym_loaded_state = self._pddl_state


def _reset_reusing_loaded_state(self: Any) -> Any:
    """``PddlEnv.reset``; the first reset after a load takes the initial state the load built
    (untouched: a game cannot step before its first reset) instead of building it again."""
    from textworld.envs.pddl import logic

    loaded = self.__dict__.pop("_sdgym_loaded_state", None)
    if loaded is None or loaded is not self._pddl_state:
        return _original("PddlEnv", "reset")(self)
    build = logic.PddlState
    logic.PddlState = lambda *args, **kwargs: loaded
    try:
        return _original("PddlEnv", "reset")(self)
    finally:
        logic.PddlState = build


def _memo_parse_and_convert(text: str, rule_name: str = "symbols", trace: bool = False) -> Any:
    return _clone(_parsed(text, rule_name, bool(trace)))


def _patches() -> list[tuple[Any, str, Any]]:
    """``(owner, attribute, replacement)`` of every patch."""
    import fast_downward
    from textworld.envs.pddl import logic, pddl, textgen

    return [
        (textgen, "_parse_and_convert", _memo_parse_and_convert),
        (textgen, "deepcopy", _fast_deepcopy),
        (textgen, "Rule", _MemoRule),
        (fast_downward, "pddl2sas", _memo_pddl2sas),
        (logic, "_parse_and_convert", _memo_logic_parse),
        (pddl.PddlEnv, "load", _load_keeping_state),
        (pddl.PddlEnv, "reset", _reset_reusing_loaded_state),
    ]


def set_enabled(enabled: bool) -> None:
    """Install (``True``) or remove (``False``) the memoisation; idempotent."""
    patches = _patches()
    if not _ORIGINALS:
        _ORIGINALS.update({_key(owner, name): getattr(owner, name) for owner, name, _ in patches})
    for owner, name, replacement in patches:
        setattr(owner, name, replacement if enabled else _ORIGINALS[_key(owner, name)])


def _key(owner: Any, name: str) -> str:
    return f"{owner.__name__}.{name}"


def _original(owner_name: str, name: str) -> Any:
    return _ORIGINALS[f"{owner_name}.{name}"]


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
