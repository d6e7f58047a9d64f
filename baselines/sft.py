"""SFT warm start: behaviour cloning on expert demonstrations from each env's privileged expert.

:func:`expert_demonstrations` runs the expert (``info["privileged"]["expert_action"]``) on train
tasks and records, per turn, the *student* prompt (public info only) and the response that carries
the expert's command. :func:`behaviour_clone` minimises the response tokens' cross-entropy.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import torch

import sdgym  # noqa: F401  (registers the env ids)
from agents.backends.hf import response_logprobs
from agents.prompts import (
    PromptLimits,
    PublicTurn,
    public_turn,
    response_for_command,
    student_messages,
)


@dataclass
class Demonstration:
    """One expert turn: the student's view and the target response."""

    turn: PublicTurn
    response: str


def expert_demonstrations(
    env_id: str, env_kwargs: dict[str, Any], split: str, tasks: int, seed: int = 0,
    limits: PromptLimits | None = None,
) -> list[Demonstration]:
    """Expert turns on up to ``tasks`` tasks of ``split`` (successful episodes only)."""
    env = gym.make(env_id, **env_kwargs)
    demos: list[Demonstration] = []
    try:
        core = env.unwrapped
        native = tuple(getattr(core, "native_action_tags", ()))
        count = min(tasks, core.task_count(split))
        order = list(range(core.task_count(split)))
        random.Random(seed).shuffle(order)
        for index in order[:count]:
            observation, info = env.reset(seed=seed, options={"split": split, "task_index": index})
            task, history, episode = observation, [], []
            for step in range(1, 200):
                command = info["privileged"]["expert_action"]
                if not command:
                    break
                turn = public_turn(env_id, task, step, history, observation, info, limits)
                episode.append(Demonstration(turn, response_for_command(env_id, command, native)))
                history.append((observation, command))
                observation, _, terminated, truncated, info = env.step(command)
                if terminated or truncated:
                    break
            if info["won"]:
                demos.extend(episode)
    finally:
        env.close()
    return demos


def behaviour_clone(
    model: torch.nn.Module,
    tokenizer: Any,
    demos: list[Demonstration],
    *,
    steps: int,
    lr: float,
    batch_size: int,
    seed: int = 0,
    render: Callable[[list[dict[str, str]]], str],
    log: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Train ``model`` on ``demos`` for ``steps`` AdamW steps; return the loss per step."""
    if not demos:
        raise ValueError("no expert demonstrations to clone")
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    encoded = [
        (
            tokenizer(render(student_messages(d.turn)), add_special_tokens=False)["input_ids"],
            tokenizer(d.response, add_special_tokens=False)["input_ids"] + [end],
        )
        for d in demos
    ]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    rng = random.Random(seed)
    losses = []
    model.train()
    for step in range(steps):
        batch = [encoded[rng.randrange(len(encoded))] for _ in range(batch_size)]
        logprobs, mask = response_logprobs(
            model, [p for p, _ in batch], [r for _, r in batch],
            pad_token_id=tokenizer.pad_token_id,
        )
        loss = -(logprobs * mask).sum() / mask.sum()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if log is not None:
            log(step, losses[-1])
    model.eval()
    return losses
