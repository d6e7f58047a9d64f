"""Throughput of sdgym/ALFWorld-v0 vs the raw alfworld/textworld engine, and reset latency.

Run: ``python -m pytest benchmarks/test_alfworld_bench.py --benchmark-only``. ``raw`` steps
TextWorld's ``PddlEnv`` as alfworld does (no memoisation); ``sdgym`` steps the env with
:mod:`sdgym.envs.alfworld.speedups` (identical trajectories). Both replay the same walkthrough
of the same full-room (ALFWorld-sized) game. Reset latency: the env's ``reset`` (memoised
translator) vs the raw engine's ``reset`` on that game.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("alfworld")

from sdgym.envs.alfworld.engine import reset_game, start_game  # noqa: E402
from sdgym.envs.alfworld.env import ALFWorldEnv  # noqa: E402
from sdgym.envs.alfworld.game_io import read_game  # noqa: E402
from sdgym.envs.alfworld.generator import game_folder  # noqa: E402

TASK = ("train", 4)
"""A kitchen with 27 receptacles and 14 objects (cooling task): an ALFWorld-sized room."""


def _replay(env, walkthrough: list[str]) -> int:
    for command in walkthrough:
        env.step(command)
    return len(walkthrough)


@pytest.mark.parametrize("fast", [False, True], ids=["raw", "sdgym"])
def test_walkthrough_steps(benchmark, fast: bool) -> None:
    """One walkthrough replay (reset excluded); steps/s = len(walkthrough) / mean time."""
    files = read_game(game_folder(*TASK))
    env = start_game(files.game, fast=fast)
    steps = benchmark.pedantic(
        _replay,
        setup=lambda: (reset_game(env), ((env, files.walkthrough), {}))[1],
        rounds=3,
        iterations=1,
        warmup_rounds=1,
    )
    benchmark.extra_info["steps"] = steps
    benchmark.extra_info["steps_per_s"] = round(steps / benchmark.stats.stats.mean, 1)
    env.close()


def test_reset_latency(benchmark) -> None:
    env = ALFWorldEnv(privileged=False)
    env.reset(options={"split": TASK[0], "task_index": TASK[1]})
    benchmark.pedantic(
        lambda: env.reset(options={"split": TASK[0], "task_index": TASK[1]}), rounds=5
    )
    env.close()


def test_reset_latency_raw(benchmark) -> None:
    env = start_game(read_game(game_folder(*TASK)).game, fast=False)
    benchmark.pedantic(lambda: reset_game(env), rounds=3)
    env.close()
