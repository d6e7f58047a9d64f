"""The expert ceiling: the gold path wins within the step limit or it does not."""

from __future__ import annotations

from sdgym.envs.scienceworld.ceiling import (
    EXPERT_CEILING,
    STEP_LIMIT,
    expert_outcome,
    sampled_variations,
)
from sdgym.envs.scienceworld.env import ScienceWorldEnv


def test_sampled_variations_are_spread_and_capped() -> None:
    assert sampled_variations([5, 6, 7, 8], 2) == [5, 7]
    assert sampled_variations([5], 3) == [5]


def test_step_limit_is_the_registered_one_and_the_ceiling_is_a_share() -> None:
    import gymnasium as gym

    assert gym.spec("sdgym/ScienceWorld-v0").max_episode_steps == STEP_LIMIT
    assert set(EXPERT_CEILING) <= {"train", "val", "test"}
    assert all(0.0 < share < 1.0 for share in EXPERT_CEILING.values())


def test_expert_wins_a_short_task_within_the_limit_but_not_within_fewer_steps() -> None:
    env = ScienceWorldEnv(task_names=["lifespan-longest-lived"])
    try:
        index = env.task_index_of("lifespan-longest-lived", split="test")
        full = expert_outcome(env, "test", index)
        assert full.won and full.steps <= full.gold_length <= STEP_LIMIT
        short = expert_outcome(env, "test", index, limit=full.steps - 1)
        assert not short.won and short.steps == full.steps - 1
    finally:
        env.close()
