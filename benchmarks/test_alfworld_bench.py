"""sdgym/ALFWorld-v0 vs the unmodified alfworld/textworld engine: steps, and the first reset of a
game whose translation is cached on disk. A/B alternating in one process (:mod:`ab_timing`).

Run: ``python -m pytest benchmarks/test_alfworld_bench.py --benchmark-only``.

* Steps: one replay of the stored walkthrough of an ALFWorld-sized kitchen (27 receptacles,
  14 objects), reset excluded; TextWorld's ``PddlEnv`` as alfworld drives it (``fast=False``)
  vs the memoised engine (:mod:`sdgym.envs.alfworld.speedups`; identical observations).
* First reset: each round switches to the other of two kitchens, so every reset loads a game.
  The anchor loads and resets it on the unmodified engine (upstream translates it again every
  time). sdgym's ``env.reset`` runs with the in-memory translation memo cleared first, so the
  translation comes from the disk cache (:mod:`sdgym.envs.alfworld.translation_cache`), as for
  the first reset of that game in a new process that already played another game (the one
  grammar parse every game shares is per process). Also reported: the same first reset vs
  sdgym's repeated reset of a loaded game (``first_vs_repeat``: 1.0 means as fast).
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("alfworld")

from benchmarks.ab_timing import alternate  # noqa: E402
from sdgym.envs.alfworld import speedups, translation_cache  # noqa: E402
from sdgym.envs.alfworld.engine import reset_game, start_game  # noqa: E402
from sdgym.envs.alfworld.env import ALFWorldEnv  # noqa: E402
from sdgym.envs.alfworld.game_io import read_game  # noqa: E402
from sdgym.envs.alfworld.generator import game_folder  # noqa: E402

TASK = ("train", 4)
"""A kitchen with 27 receptacles and 14 objects (cooling task): an ALFWorld-sized room."""
OTHER_TASK = ("train", 8)
"""A second kitchen (18 receptacles), so that each first-reset round loads a different game."""

STEP_TARGET = 12.0
FIRST_RESET_TARGET = 10.0
"""Medians the issue asks for (ratios against the unmodified engine)."""


def _replay(env, walkthrough: list[str], fast: bool) -> float:
    speedups.set_enabled(fast)  # the patch is process-wide: each side runs with its own setting
    reset_game(env)
    started = time.perf_counter()
    for command in walkthrough:
        env.step(command)
    return time.perf_counter() - started


def test_walkthrough_steps(benchmark) -> None:
    """Median speed-up of a walkthrough replay, sdgym vs the unmodified engine."""
    files = read_game(game_folder(*TASK))
    walkthrough = files.walkthrough
    raw, fast = start_game(files.game, fast=False), start_game(files.game, fast=True)
    try:
        result = alternate(lambda: _replay(fast, walkthrough, True),
                           lambda: _replay(raw, walkthrough, False), rounds=7)
        benchmark.pedantic(_replay, args=(fast, walkthrough, True), rounds=1, iterations=1)
    finally:
        speedups.set_enabled(True)
        raw.close()
        fast.close()
    benchmark.extra_info.update(result.summary("speedup"), steps=len(walkthrough),
                                sdgym_steps_per_s=round(len(walkthrough) / min(result.candidate), 1),
                                upstream_steps_per_s=round(len(walkthrough) / min(result.anchor), 1))
    assert result.median >= STEP_TARGET, result.ratios


def test_first_reset_from_disk_cache(benchmark) -> None:
    """Median speed-up of a first reset (load + reset of a game not in memory), sdgym with the
    translation on disk vs the unmodified engine."""
    tasks = [TASK, OTHER_TASK]
    games = [read_game(game_folder(*task)).game for task in tasks]
    env = ALFWorldEnv(privileged=False)
    raw = None
    turn = {"sdgym": 0, "upstream": 0}
    loaded: list[tuple[str, int]] = []

    def sdgym_first_reset() -> float:
        split, index = tasks[turn["sdgym"] % 2]
        turn["sdgym"] += 1
        assert loaded != [(split, index)], "a first reset must load another game"
        loaded[:] = [(split, index)]
        speedups._memo_pddl2sas.cache_clear()
        translation_cache.parsed_task.cache_clear()
        started = time.perf_counter()
        env.reset(options={"split": split, "task_index": index})
        return time.perf_counter() - started

    def sdgym_repeated_reset() -> float:
        started = time.perf_counter()
        (split, index), = loaded
        env.reset(options={"split": split, "task_index": index})
        return time.perf_counter() - started

    def upstream_first_reset() -> float:
        nonlocal raw
        game = games[turn["upstream"] % 2]
        turn["upstream"] += 1
        started = time.perf_counter()
        raw = start_game(game, fast=False, env=raw)
        reset_game(raw)
        seconds = time.perf_counter() - started
        speedups.set_enabled(True)
        return seconds

    try:
        for task in tasks:  # fills the disk cache (as the game's generation already did)
            env.reset(options={"split": task[0], "task_index": task[1]})
        loaded[:] = [tasks[1]]
        for game in games:
            for optimize in (False, True):
                path = translation_cache.entry_path(game["pddl_domain"], game["pddl_problem"],
                                                    optimize)
                assert path.exists(), f"no disk cache entry for a game: {path}"
        versus_upstream = alternate(sdgym_first_reset, upstream_first_reset, rounds=6)
        versus_repeat = alternate(sdgym_first_reset,
                                  lambda: (sdgym_first_reset(), sdgym_repeated_reset())[1],
                                  rounds=6)
        benchmark.pedantic(sdgym_first_reset, rounds=1, iterations=1)
    finally:
        env.close()
        if raw is not None:
            raw.close()
    benchmark.extra_info.update(**versus_upstream.summary("speedup"),
                                **versus_repeat.summary("first_vs_repeat"))
    assert versus_upstream.median >= FIRST_RESET_TARGET, versus_upstream.ratios
