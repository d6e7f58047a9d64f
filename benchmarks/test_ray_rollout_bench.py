"""Ray rollout scaling: env steps/s of the rollout engine with 1, 2 and 4 Ray env workers vs local.

The policy is scripted (every turn is the same ``<search>`` command, generation costs nothing),
so what is measured is env stepping through the engine: a real BM25 retrieval per step on tiny
Search-QA, 8 or 32 sub-envs (2 or 8 groups x 4) for 4 turns = 32 or 128 env steps per round. Worker start-up is
outside the timed rounds. ``benchmarks/run_all.py`` reports each Ray case as a ratio against the
local case of the same run (> 1: Ray is faster).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("ray")

from agents.backends.base import Generation, PolicyBackend, SamplingParams  # noqa: E402
from agents.ray_runtime import ray_session  # noqa: E402
from agents.rollout import RolloutEngine, RolloutEngineConfig  # noqa: E402

COMMAND = "<search>who founded the river town</search>"
TURNS = 4


class ScriptedSearchBackend(PolicyBackend):
    """Answers every prompt with :data:`COMMAND` (no model)."""

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[Generation]:
        return [Generation(text=COMMAND) for _ in prompts]

    def score(self, prompt_ids, response_ids):
        raise NotImplementedError("a scripted policy has no log-probs")


@pytest.fixture(scope="module")
def ray_cluster():
    with ray_session(num_cpus=2) as session:
        yield session


@pytest.mark.parametrize("groups", [2, 8], ids=["8envs", "32envs"])
@pytest.mark.parametrize("workers", [0, 1, 2, 4], ids=["local", "ray1", "ray2", "ray4"])
def test_rollout_env_steps(benchmark, ray_cluster, workers, groups) -> None:
    config = RolloutEngineConfig("sdgym/SearchQA-v0", {"size": "tiny"}, num_groups=groups, group_size=4,
                           max_turns=TURNS, rollout_backend="ray" if workers else "local",
                           ray_num_workers=max(workers, 1))
    engine = RolloutEngine(config, ScriptedSearchBackend(), lambda m: m[-1]["content"])
    params = SamplingParams(max_new_tokens=8)
    steps = []

    def rollout() -> None:
        steps.append(len(engine.collect(list(range(groups)), params).rows))

    try:
        rollout()  # warm-up: first reset of every sub-env
        benchmark.pedantic(rollout, rounds=10, iterations=1)
    finally:
        engine.close()
    assert steps[-1] == groups * 4 * TURNS
    benchmark.extra_info.update(env_steps_per_round=steps[-1], workers=workers)
    if benchmark.stats:  # absent under --benchmark-disable
        benchmark.extra_info["env_steps_per_s"] = steps[-1] / benchmark.stats.stats.mean
