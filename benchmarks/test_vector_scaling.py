"""Vector-env scaling: env steps/s with 1, 2 and 4 sub-envs (sync and async), per env.

Each round resets the vector env and steps every sub-env a few times with the expert's action,
so the ratio between 4 envs and 1 env shows how far vectorisation scales on this machine.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import sdgym  # noqa: F401

pytest.importorskip("pytest_benchmark")

CASES = {"sdgym/SearchQA-v0": {"size": "tiny"}, "sdgym/WebShop-v0": {"size": "tiny"}}


def _expert_actions(infos, count: int) -> tuple[str, ...]:
    actions = infos["privileged"]["expert_action"]
    return tuple(str(actions[i]) if actions[i] else "look" for i in range(count))


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("num_envs", [1, 2, 4])
@pytest.mark.parametrize("env_id", list(CASES))
def test_vector_steps(benchmark, env_id, num_envs, mode) -> None:
    vector = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode=mode, **CASES[env_id])
    benchmark.extra_info["env_steps_per_round"] = num_envs * 3

    def round_trip() -> None:
        _, infos = vector.reset(seed=list(range(num_envs)), options={"split": "train"})
        for _ in range(3):
            _, _, _, _, infos = vector.step(_expert_actions(infos, num_envs))

    try:
        benchmark(round_trip)
    finally:
        vector.close()
