"""ScienceWorld throughput: sdgym steps/s vs raw ``scienceworld`` ``env.step``, resets, JVM memory.

Run: ``python -m pytest benchmarks/test_scienceworld_bench.py --benchmark-only``. The step
benchmark replays the same gold episode (``chemistry-mix``, variation 0) on sdgym and on the raw
upstream env, A/B alternating in one process, and records the py4j call latency beside the
ratios; the reset benchmarks record the JVM's resident memory.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("scienceworld")
pytest.importorskip("pytest_benchmark")

import sdgym  # noqa: E402,F401
from benchmarks.ab_timing import alternate  # noqa: E402

TASK, VARIATION = "chemistry-mix", 0


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


PANEL_ACTIONS = ("look around", "teleport to kitchen", "open fridge", "look at fridge",
                 "teleport to outside", "inventory", "teleport to greenhouse", "look around",
                 "focus on bee", "teleport to hallway", "wait1", "look around")
"""A fixed 12-step episode for the panel benchmark (the benchmark presets' episode length)."""


def _panel_seconds(jvm: str, width: int, episodes_per_env: int, trace: list) -> float:
    """Seconds of a validation panel's env work: ``width`` fresh envs (hidden privileged info,
    as on every validation and test panel), each playing ``episodes_per_env`` episodes of
    :data:`PANEL_ACTIONS` in lock-step, then closed. Appends every observation to ``trace``."""
    from sdgym.wrappers import HidePrivileged

    started = time.perf_counter()
    envs = [HidePrivileged(gym.make("sdgym/ScienceWorld-v0", simplifications="easy",
                                    max_episode_steps=12, jvm=jvm)) for _ in range(width)]
    try:
        for episode in range(episodes_per_env):
            for k, env in enumerate(envs):
                trace.append(env.reset(options={"split": "easy_val",
                                                "task_index": episode * width + k})[0])
            done = [False] * width
            for action in PANEL_ACTIONS:
                for k, env in enumerate(envs):
                    if not done[k]:
                        observation, _, terminated, truncated, _ = env.step(action)
                        trace.append(observation)
                        done[k] = terminated or truncated
    finally:
        for env in envs:
            env.close()
    return time.perf_counter() - started


@pytest.mark.slow
def test_panel_shared_jvm_vs_one_jvm_per_env(benchmark) -> None:
    """A validation panel's env work (8 envs x 2 episodes of 12 steps, privileged info hidden;
    the presets' panels are 16 wide, halved to fit pytest's 300 s limit) on the process's shared
    JVM vs one JVM per env (the earlier default), A/B alternating (:mod:`ab_timing`). Both sides
    must see identical observations. The shared JVM stays warm from round to round, as it does
    from panel to panel in training."""
    from sdgym.envs.scienceworld.shared_jvm import close_shared_jvms

    traces: dict[str, list] = {"shared": [], "own": []}

    def side(jvm: str) -> float:
        trace: list = []
        seconds = _panel_seconds(jvm, width=8, episodes_per_env=2, trace=trace)
        traces[jvm] = trace
        return seconds

    try:
        result = alternate(lambda: side("shared"), lambda: side("own"), rounds=3)
        benchmark.pedantic(side, args=("shared",), rounds=1, iterations=1)
    finally:
        close_shared_jvms()
    assert traces["shared"] == traces["own"], "the shared JVM played differently"
    benchmark.extra_info.update(**result.summary("shared_jvm_speedup"), panel_envs=8,
                                episodes_per_env=2, steps_per_episode=len(PANEL_ACTIONS))


def _py4j_call_seconds(server: Any, calls: int = 200) -> float:
    """Median round trip of a trivial py4j call (``getNumMoves``) over ``calls`` calls."""
    seconds = []
    for _ in range(calls):
        started = time.perf_counter()
        server.getNumMoves()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def _until_won(env: gym.Env, index: int, gold: list[str]) -> list[str]:
    """The gold actions up to the one that wins: upstream's sequence can go on after the task is
    complete, where sdgym's episode is over and a further action never reaches the simulator
    (a free step the raw side would pay for)."""
    env.reset(options={"task_index": index})
    for taken, action in enumerate(gold, start=1):
        _, _, terminated, _, info = env.step(action)
        if terminated:
            assert info["won"], "the gold episode ended without winning"
            return gold[:taken]
    raise AssertionError("the gold episode never ends")


@pytest.mark.slow
def test_step_ratios_vs_raw_with_py4j_latency(benchmark, sd_env: gym.Env, gold: list[str]) -> None:
    """sdgym step (admissible off, and on every step) vs raw ``scienceworld`` ``env.step``, A/B
    alternating in one process (:mod:`ab_timing`). Every round: both sides load the task and take
    upstream's first ``look around`` untimed, then the same gold actions timed; the observations
    and the simulator's move counter must agree, so both sides took the same real steps. The
    py4j round-trip latency of each JVM is measured in every round beside the ratios (raw steps
    copy ~3,100 valid actions one py4j call each, so their speed follows it)."""
    from scienceworld import ScienceWorldEnv

    unwrapped = sd_env.unwrapped
    index = unwrapped.task_index_of(TASK, VARIATION)
    gold = _until_won(sd_env, index, gold)
    raw = ScienceWorldEnv(TASK)
    latency: dict[str, list[float]] = {"raw": [], "sdgym": []}
    trajectories: dict[str, list[str]] = {}
    valid_counts: list[int] = []

    def sdgym_episode(mode: str) -> float:
        unwrapped.admissible_mode = mode
        sd_env.reset(options={"task_index": index})
        observations = []
        started = time.perf_counter()
        for action in gold:
            observations.append(sd_env.step(action)[0])
        seconds = time.perf_counter() - started
        server = unwrapped.simulator.session
        trajectories[f"sdgym-{mode}"] = [*observations, f"moves={server.getNumMoves()}"]
        latency["sdgym"].append(_py4j_call_seconds(server))
        return seconds

    def raw_episode() -> float:
        raw.load(TASK, VARIATION, "")
        raw.step("look around")
        observations, info = [], {}
        started = time.perf_counter()
        for action in gold:
            observation, _, _, info = raw.step(action)
            observations.append(observation)
        seconds = time.perf_counter() - started
        valid_counts.append(len(info["valid"]))
        trajectories["raw"] = [*observations, f"moves={raw.server.getNumMoves()}"]
        latency["raw"].append(_py4j_call_seconds(raw.server))
        return seconds

    try:
        admissible_off = alternate(lambda: sdgym_episode("on_request"), raw_episode, rounds=5)
        admissible_on = alternate(lambda: sdgym_episode("always"), raw_episode, rounds=5)
        benchmark.pedantic(sdgym_episode, args=("on_request",), rounds=1, iterations=1)
    finally:
        unwrapped.admissible_mode = "on_request"
        raw.close()
        raw._gateway.java_process.wait(timeout=10)
    assert trajectories["raw"] == trajectories["sdgym-on_request"] == trajectories["sdgym-always"]
    steps = len(gold)
    benchmark.extra_info.update(
        **admissible_off.summary("admissible_off_speedup"),
        **admissible_on.summary("admissible_on_speedup"),
        steps_per_side_per_round=steps,
        raw_steps_per_s=round(steps / statistics.median(admissible_off.anchor), 2),
        sdgym_off_steps_per_s=round(steps / statistics.median(admissible_off.candidate), 2),
        sdgym_on_steps_per_s=round(steps / statistics.median(admissible_on.candidate), 2),
        raw_py4j_call_us_median=round(1e6 * statistics.median(latency["raw"]), 1),
        raw_py4j_call_us_min=round(1e6 * min(latency["raw"]), 1),
        raw_py4j_call_us_max=round(1e6 * max(latency["raw"]), 1),
        sdgym_py4j_call_us_median=round(1e6 * statistics.median(latency["sdgym"]), 1),
        raw_valid_actions_last_step=valid_counts[-1],
    )
