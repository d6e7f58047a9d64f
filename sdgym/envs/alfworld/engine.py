"""Start ALFWorld games on TextWorld's PDDL engine, exactly as alfworld's ``AlfredTWEnv`` does.

:func:`start_game` loads a ``game.tw-pddl`` (path or dict) into ``textworld``'s ``PddlEnv`` with
alfworld's ``AlfredDemangler`` (ids displayed as "apple 1"), requesting the admissible commands
and ``won``. Loading runs fast-downward's translator, which overwrites ``sys.argv``; this module
saves and restores it. Every new ``PddlEnv`` copies and loads its own ``libdownward`` that
TextWorld never unloads (~2 MB per game; unloading it crashes the interpreter later): pass the
previous env to :func:`start_game` to load the next game into it.
"""

from __future__ import annotations

from collections.abc import Mapping
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
        env = AlfredDemangler(shuffle=False)(PddlEnv(infos))
    with preserved_argv(), speedups.patched(fast):
        env.load(game if isinstance(game, str) else dict(game))
    return env


def reset_game(env: Any, *, fast: bool = True) -> Any:
    """``env.reset()`` with ``sys.argv`` preserved (a reset re-runs the translator)."""
    with preserved_argv(), speedups.patched(fast):
        return env.reset()


def step_game(env: Any, command: str, *, fast: bool = True) -> Any:
    """``env.step(command)``'s state (TextWorld's ``GameState``)."""
    with speedups.patched(fast):
        state, _, _ = env.step(command)
    return state
