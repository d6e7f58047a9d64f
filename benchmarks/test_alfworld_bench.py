"""Throughput of sdgym/ALFWorld-v0 vs the raw alfworld/textworld engine, and reset latency.

Run: ``python -m pytest benchmarks/test_alfworld_bench.py --benchmark-only``. ``raw`` steps
TextWorld's ``PddlEnv`` as alfworld does (no memoisation); ``sdgym`` steps the env with
:mod:`sdgym.envs.alfworld.speedups` (identical trajectories). Both replay the same walkthrough.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("alfworld")

from sdgym.envs.alfworld.engine import reset_game, start_game  # noqa: E402
from sdgym.envs.alfworld.env import ALFWorldEnv  # noqa: E402
from sdgym.envs.alfworld.game_io import read_game  # noqa: E402
from sdgym.envs.alfworld.generator import game_folder  # noqa: E402

TASK = ("train", 0)


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
    )
    benchmark.extra_info["steps"] = steps
    env.close()


def test_reset_latency(benchmark) -> None:
    env = ALFWorldEnv(privileged=False)
    env.reset(options={"split": TASK[0], "task_index": TASK[1]})
    benchmark.pedantic(
        lambda: env.reset(options={"split": TASK[0], "task_index": TASK[1]}), rounds=5
    )
    env.close()
