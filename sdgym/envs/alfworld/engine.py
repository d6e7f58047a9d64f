"""Start ALFWorld games on TextWorld's PDDL engine, exactly as alfworld's ``AlfredTWEnv`` does.

:func:`start_game` loads a ``game.tw-pddl`` (path or dict) into ``textworld``'s ``PddlEnv`` with
alfworld's ``AlfredDemangler`` (ids displayed as "apple 1"), requesting the admissible commands
and ``won``. Loading runs fast-downward's translator, which overwrites ``sys.argv``; this module
saves and restores it.

Every new ``PddlEnv`` gets its own copy of ``libdownward.so`` (``fast_downward.load_lib`` copies
the 33.7 MB file to a temporary folder, loads it and deletes the file), so that live engines in
one process do not share the planner's global state. The loaded copy is never unloaded (unloading
crashes the interpreter later), so its disk blocks stay allocated, deleted but mapped, until the
process exits: a benchmark worker that made 1,300 engines held 44 GB of disk that ``du`` does not
show (measured 2026-12-06; it is what filled the disk in earlier benchmark runs). Here a closed
engine's library goes back to a per-process pool (:func:`close_game`) and the next engine takes
it instead of a new copy, so a process holds at most as many copies as it has engines alive at
once. Pass the previous env to :func:`start_game` to load the next game into the same engine.

TextWorld interns every ``Proposition`` and ``Signature`` it makes in one module-level table
that never forgets (:func:`_interning_table`), and an ALFWorld game's objects are named by their
coordinates, so each new game added its facts to it for good: about 6 MB of resident memory per
1,000 steps with a fresh env per episode (``benchmarks/soak.py``, 2026-12-06). The env drops the
entries that nothing else holds (:func:`release_interned`) when it closes and when a reset has
replaced one game by another.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from sdgym.envs.alfworld import speedups
from sdgym.envs.alfworld.translation_cache import preserved_argv


def start_game(
    game: str | Mapping[str, Any],
    *,
    fast: bool = True,
    walkthrough: bool = False,
    env: Any = None,
) -> Any:
    """A loaded (not yet reset) TextWorld environment for one ALFWorld game.

    Args:
        game: path of a ``game.tw-pddl`` file, or its parsed JSON.
        fast: run under the memoisation of :mod:`.speedups` (same trajectories, ~10x faster);
            pass the same to :func:`reset_game` and :func:`step_game`.
        walkthrough: ask for ``extra.walkthrough`` (the stored one, or the planner's) on reset.
        env: an env from an earlier call (same ``walkthrough``) to load the game into.
    """
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
    from textworld.envs.pddl import PddlEnv

    infos = textworld.EnvInfos(
        admissible_commands=True, won=True, extras=["walkthrough"] if walkthrough else []
    )
    if env is None:
        with _pooled_libraries():
            env = AlfredDemangler(shuffle=False)(PddlEnv(infos))
    with preserved_argv(), speedups.patched(fast):
        env.load(game if isinstance(game, str) else dict(game))
    return env


_FREE_LIBRARIES: list[Any] = []
"""Loaded ``libdownward`` copies of closed engines, for the next engines of this process."""
_POOL_LOCK = threading.Lock()


@contextlib.contextmanager
def _pooled_libraries() -> Iterator[None]:
    """While a ``PddlEnv`` is made: ``fast_downward.load_lib`` hands out a pooled copy if there
    is one (a fresh copy otherwise)."""
    import fast_downward

    original = fast_downward.load_lib

    def load_lib() -> Any:
        with _POOL_LOCK:
            if _FREE_LIBRARIES:
                return _FREE_LIBRARIES.pop()
        return original()

    with _POOL_LOCK:
        fast_downward.load_lib = load_lib
    try:
        yield
    finally:
        with _POOL_LOCK:
            fast_downward.load_lib = original


def close_game(env: Any) -> None:
    """Close an engine made by :func:`start_game` and give its ``libdownward`` copy to the pool
    (the engine must not be used afterwards). Its facts stay interned by TextWorld until the
    caller drops the engine (and its last ``GameState``) and calls :func:`release_interned`."""
    engine = env.unwrapped
    library = getattr(engine, "downward_lib", None)
    env.close()
    if library is not None:
        engine.downward_lib = None
        with _POOL_LOCK:
            _FREE_LIBRARIES.append(library)


def pooled_library_count() -> int:
    """Library copies waiting in this process's pool."""
    with _POOL_LOCK:
        return len(_FREE_LIBRARIES)


def _interning_table() -> dict[Any, Any]:
    """The table in which ``textworld.logic`` interns its ``Proposition``s and ``Signature``s.

    textworld 1.7.0 makes both classes with ``mementos`` 1.3.1 metaclasses (``PropositionTracker``
    and ``SignatureTracker``): a call returns the instance stored under ``(class, name, argument
    names and types)`` in the module-level dict ``mementos.core._memento_cache``, else makes and
    stores one, and nothing ever removes it. (Their ``__slots__`` have no ``__weakref__``, so the
    dict cannot be swapped for a weak one.)"""
    from mementos import core

    return core._memento_cache


def _references(table: dict[Any, Any], key: Any) -> int:
    return sys.getrefcount(table[key])


_ONLY_THE_TABLE = _references({0: object()}, 0)
"""What :func:`_references` counts for a value that only its table holds (2 on CPython 3.11)."""


def release_interned() -> int:
    """Drop TextWorld's interned propositions and signatures that nothing but the interning table
    holds any more (the facts of closed or replaced games); returns how many were dropped.

    Unobservable to TextWorld: an instance that anything still holds stays interned (the same
    object comes back), and one that nothing holds cannot be compared by identity with anything;
    made again later, it is a new, equal object (both classes compare and hash by value). The
    upstream table keeps everything: over a soak's 4,000 steps of fresh ALFWorld games it held
    27k propositions with 46k variables, growing ~6 MB per 1,000 steps; this bounds it to the
    facts of the engines alive."""
    from textworld.logic import Proposition, Signature

    table = _interning_table()
    dropped = 0
    # a proposition holds its signature: propositions first, so their signatures go in the same call
    for kind in (Proposition, Signature):
        for key in [key for key, value in table.items() if isinstance(value, kind)]:
            if key in table and _references(table, key) <= _ONLY_THE_TABLE:
                del table[key]
                dropped += 1
    return dropped


def interned_count() -> int:
    """Propositions and signatures in TextWorld's interning table (for tests and the soak)."""
    from textworld.logic import Proposition, Signature

    values = list(_interning_table().values())
    return sum(isinstance(value, (Proposition, Signature)) for value in values)


def reset_game(env: Any, *, fast: bool = True) -> Any:
    """``env.reset()`` with ``sys.argv`` preserved (a reset re-runs the translator)."""
    with preserved_argv(), speedups.patched(fast):
        return env.reset()


def step_game(env: Any, command: str, *, fast: bool = True) -> Any:
    """``env.step(command)``'s state (TextWorld's ``GameState``)."""
    with speedups.patched(fast):
        state, _, _ = env.step(command)
    return state
