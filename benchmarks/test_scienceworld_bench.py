"""ScienceWorld throughput: sdgym steps/s vs raw ``scienceworld`` ``env.step``, resets, JVM memory.

Run: ``python -m pytest benchmarks/test_scienceworld_bench.py --benchmark-only``. Each stepping
benchmark replays the same gold episode (``chemistry-mix``, variation 0, 25 actions) per round;
``extra_info`` holds steps/s and the JVM's resident memory. At most one JVM runs at a time per test.
"""

from __future__ import annotations

from collections.abc import Iterator

import gymnasium as gym
import pytest

pytest.importorskip("scienceworld")
pytest.importorskip("pytest_benchmark")

import sdgym  # noqa: E402,F401

TASK, VARIATION = "chemistry-mix", 0
ROUNDS = 5


@pytest.fixture(scope="module")
def sd_env() -> Iterator[gym.Env]:
    """One sdgym env (one JVM, default -Xmx512m) for every sdgym benchmark in the module."""
    env = gym.make(
        "sdgym/ScienceWorld-v0", task_names=[TASK], privileged=False, max_episode_steps=1000
    )
    yield env
    env.close()


@pytest.fixture(scope="module")
def gold() -> list[str]:
    """The gold episode (computed once on a throwaway privileged env)."""
    env = gym.make("sdgym/ScienceWorld-v0", task_names=[TASK])
    try:
        _, info = env.reset(options={"task_index": env.unwrapped.task_index_of(TASK, VARIATION)})
        return list(info["privileged"]["gold_plan_from_start"])
    finally:
        env.close()


def _episode_bench(benchmark, env: gym.Env, gold: list[str], mode: str) -> None:
    unwrapped = env.unwrapped
    unwrapped.admissible_mode = mode
    index = unwrapped.task_index_of(TASK, VARIATION)

    def setup() -> None:
        env.reset(options={"task_index": index})

    def run() -> float:
        info: dict = {}
        for action in gold:
            info = env.step(action)[4]
        return info["score"]

    score = benchmark.pedantic(run, setup=setup, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    assert score == 1.0
    benchmark.extra_info["steps_per_s"] = len(gold) / benchmark.stats.stats.mean
    benchmark.extra_info["jvm_rss_mb"] = unwrapped.jvm_rss_bytes() / 2**20
    unwrapped.admissible_mode = "on_request"


@pytest.mark.slow
def test_sdgym_step_admissible_off(benchmark, sd_env: gym.Env, gold: list[str]) -> None:
    """sdgym step without the valid-action list (the default)."""
    _episode_bench(benchmark, sd_env, gold, "on_request")


@pytest.mark.slow
def test_sdgym_step_admissible_on(benchmark, sd_env: gym.Env, gold: list[str]) -> None:
    """sdgym step with ``info["admissible_actions"]`` on every step."""
    _episode_bench(benchmark, sd_env, gold, "always")


@pytest.mark.slow
def test_sdgym_reset_latency(benchmark, sd_env: gym.Env) -> None:
    """Reset to a fixed task (JVM already running; no gold path since privileged=False)."""
    index = sd_env.unwrapped.task_index_of(TASK, VARIATION)
    benchmark.pedantic(
        lambda: sd_env.reset(options={"task_index": index}), rounds=10, warmup_rounds=1
    )
    benchmark.extra_info["jvm_rss_mb"] = sd_env.unwrapped.jvm_rss_bytes() / 2**20


@pytest.mark.slow
def test_sdgym_reset_latency_privileged_cached(benchmark) -> None:
    """Reset with the privileged channel (gold path from the cache after the first reset)."""
    env = gym.make("sdgym/ScienceWorld-v0", task_names=[TASK])
    try:
        index = env.unwrapped.task_index_of(TASK, VARIATION)
        benchmark.pedantic(
            lambda: env.reset(options={"task_index": index}), rounds=10, warmup_rounds=1
        )
        rss = env.unwrapped.jvm_rss_bytes()
        benchmark.extra_info["jvm_rss_mb"] = rss / 2**20
        assert rss < 1.5 * 2**30  # -Xmx512m keeps the JVM well under this
    finally:
        env.close()


@pytest.mark.slow
def test_raw_scienceworld_env_step(benchmark, gold: list[str]) -> None:
    """Upstream ``ScienceWorldEnv.step`` (always computes valid actions; uncapped JVM)."""
    from scienceworld import ScienceWorldEnv

    raw = ScienceWorldEnv(TASK)
    try:

        def setup() -> None:
            raw.load(TASK, VARIATION, "")
            raw.step("look around")

        def run() -> int:
            info: dict = {}
            for action in gold:
                info = raw.step(action)[3]
            return info["score"]

        score = benchmark.pedantic(run, setup=setup, rounds=ROUNDS, iterations=1, warmup_rounds=1)
        assert score == 100
        benchmark.extra_info["steps_per_s"] = len(gold) / benchmark.stats.stats.mean
        import psutil

        rss = psutil.Process(raw._gateway.java_process.pid).memory_info().rss
        benchmark.extra_info["jvm_rss_mb"] = rss / 2**20
    finally:
        raw.close()
        raw._gateway.java_process.wait(timeout=10)
