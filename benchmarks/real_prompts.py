"""Prompts the agents really read, for benchmarks: chat-rendered first-turn student prompts, and
the prompts a teacher with a per-turn context reads at the same turns."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

import sdgym  # noqa: F401  (registers the environments)
from agents.backends.base import render_chat
from agents.prompts import public_turn, student_messages
from baselines.teacher import turn_teacher_messages


def first_turn_prompts(tokenizer: Any, count: int, *, env_id: str = "sdgym/SearchQA-v0",
                       split: str = "easy_train", teacher_context: str | None = None,
                       **env_kwargs: Any) -> list[str]:
    """The student prompts of the first turn of ``count`` episodes (env seeds ``0..count-1``);
    with ``teacher_context`` (a per-turn context of :mod:`baselines.teacher`, e.g.
    ``"privileged"``), the prompts a teacher with that context reads there instead."""
    env = gym.make(env_id, **env_kwargs)
    try:
        prompts = []
        for seed in range(count):
            observation, info = env.reset(seed=seed, options={"split": split})
            turn = public_turn(env_id, observation, 1, [], observation, info)
            messages = (student_messages(turn) if teacher_context is None else
                        turn_teacher_messages(turn, teacher_context, info.get("privileged"),
                                              str(info.get("task_type", "")), env_id))
            prompts.append(render_chat(tokenizer, messages))
        return prompts
    finally:
        env.close()
