"""Gold action sequences replay to score 1.0 on every task (first variation of each split)."""

from __future__ import annotations

import gymnasium as gym
import pytest

from sdgym.envs.scienceworld.tasks import TASK_NAMES


def replay_gold(env: gym.Env, split: str, index: int) -> dict:
    """Reset to ``(split, index)``, follow ``expert_action`` to the end; return the last info."""
    _, info = env.reset(options={"split": split, "task_index": index})
    gold = info["privileged"]["gold_plan_from_start"]
    assert gold and info["privileged"]["expert_plan"] == gold
    total = 0.0
    for step, action in enumerate(gold):
        assert info["privileged"]["expert_action"] == action
        _, reward, terminated, truncated, info = env.step(action)
        assert info["action_valid"], (step, action)
        assert reward >= 0.0
        total += reward
        if terminated or truncated:
            break
    assert info["won"] and info["score"] == pytest.approx(1.0), info["task_id"]
    assert total == pytest.approx(1.0)
    assert info["privileged"]["goal"]["subgoals_pending"] == []
    return info


UPSTREAM_BROKEN = {"mendelian-genetics-known-plant", "mendelian-genetics-unknown-plant"}
"""Upstream gold sequences of some variations here do not replay (e.g. known-plant/0 stops at 30:
at step 79 the gold agent answers an "Ambiguous request" the replay never gets). Reproduced with
the bare ``PythonInterface`` with and without sdgym's JVM flags; variation 60 replays to 100."""


@pytest.mark.slow
@pytest.mark.parametrize(
    "task",
    [
        pytest.param(
            name,
            marks=pytest.mark.xfail(name in UPSTREAM_BROKEN, reason="upstream gold path bug"),
        )
        for name in TASK_NAMES
    ],
)
def test_gold_replay_reaches_full_score(sw_env: gym.Env, task: str) -> None:
    for split in ("train", "val", "test"):
        replay_gold(sw_env, split, sw_env.unwrapped.task_index_of(task, None, split))
