"""Env options: admissible actions every step, simplifications, and no privileged channel."""

from __future__ import annotations

import gymnasium as gym
import pytest


def test_always_admissible_easy_simplifications_gold_replay() -> None:
    env = gym.make(
        "sdgym/ScienceWorld-v0",
        task_names=["boil", "power-component"],
        simplifications="easy",
        admissible_actions="always",
        max_episode_steps=200,
    )
    try:
        for task in ("boil", "power-component"):
            _, info = env.reset(options={"task_index": env.unwrapped.task_index_of(task, 0)})
            assert info["privileged"]["goal"]["simplifications"] == "easy"
            assert "look around" in info["admissible_actions"]
            if task == "boil":
                assert any(a.startswith("teleport to") for a in info["admissible_actions"])
            for action in info["privileged"]["gold_plan_from_start"]:
                _, _, terminated, _, info = env.step(action)  # upstream's gold under "easy"
                # holds a few commands the simulator rejects (e.g. "examine steam"): skipped
                assert isinstance(info["admissible_actions"], list)
            assert terminated and info["won"]
    finally:
        env.close()


def test_never_admissible_and_unprivileged() -> None:
    env = gym.make(
        "sdgym/ScienceWorld-v0",
        task_names=["find-plant"],
        admissible_actions="never",
        privileged=False,
    )
    try:
        _, info = env.reset(seed=1)
        assert "privileged" not in info and info["admissible_actions"] is None
        assert env.unwrapped.get_admissible_actions() is None
        assert env.unwrapped.simulator._gold_cache == {}  # no gold path computed
        _, _, _, _, info = env.step("look around")
        assert info["action_valid"] and info["admissible_actions"] is None
    finally:
        env.close()


@pytest.mark.parametrize("java_options", [("-Xmx64k",)])
def test_bad_java_options_fail_clearly(java_options: tuple[str, ...]) -> None:
    env = gym.make("sdgym/ScienceWorld-v0", task_names=["find-plant"], java_options=java_options)
    try:
        with pytest.raises(Exception, match="did not start"), pytest.warns(RuntimeWarning):
            env.reset(seed=0)
    finally:
        env.close()
