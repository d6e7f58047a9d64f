"""Prompts the agents really read, for benchmarks: chat-rendered first-turn student prompts."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

import sdgym  # noqa: F401  (registers the environments)
from agents.backends.base import render_chat
from agents.prompts import public_turn, student_messages


def first_turn_prompts(tokenizer: Any, count: int, *, env_id: str = "sdgym/SearchQA-v0",
                       split: str = "easy_train", **env_kwargs: Any) -> list[str]:
    """The student prompts of the first turn of ``count`` episodes (env seeds ``0..count-1``)."""
    env = gym.make(env_id, **env_kwargs)
    try:
        prompts = []
        for seed in range(count):
            observation, info = env.reset(seed=seed, options={"split": split})
            turn = public_turn(env_id, observation, 1, [], observation, info)
            prompts.append(render_chat(tokenizer, student_messages(turn)))
        return prompts
    finally:
        env.close()
