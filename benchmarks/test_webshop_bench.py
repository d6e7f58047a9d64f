"""Throughput of sdgym/WebShop-v0 in text mode: steps per second and reset latency.

Run: ``python -m pytest benchmarks/test_webshop_bench.py --benchmark-only``.
"""

from __future__ import annotations

import pytest

from sdgym.envs.webshop.env import WebShopEnv

pytest.importorskip("pytest_benchmark")


@pytest.fixture(scope="module", params=[True, False], ids=["privileged", "plain"])
def env(request: pytest.FixtureRequest) -> WebShopEnv:
    env = WebShopEnv(size="full", privileged=request.param)
    yield env
    env.close()


def _expert_episode(env: WebShopEnv, index: int) -> int:
    _, info = env.reset(options={"split": "train", "task_index": index})
    plan = env.expert_plan()
    for action in plan:
        env.step(action)
    return len(plan) + 1


def test_reset_latency(benchmark, env: WebShopEnv) -> None:
    counter = iter(range(10**9))
    benchmark(lambda: env.reset(options={"split": "train", "task_index": next(counter) % 500}))


def test_expert_episode_steps(benchmark, env: WebShopEnv) -> None:
    """One expert episode (reset + ~4 steps) on a fresh goal per round."""
    counter = iter(range(10**9))
    steps = benchmark(lambda: _expert_episode(env, next(counter) % 5000))
    assert steps >= 3


def test_invalid_step(benchmark, env: WebShopEnv) -> None:
    env.reset(options={"split": "train", "task_index": 0})
    benchmark(env.step, "click[nothing]")
