"""Non-learning reference policies: uniform random over the candidate commands, and the expert.

Both take the env's ``(observation, info)`` and return a command. The random policy sees only
public info; the expert reads ``info["privileged"]["expert_action"]`` by definition.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

import gymnasium as gym

from sdgym.wrappers.admissible_discrete import candidate_commands


class Policy(Protocol):
    """A text policy: one command per observation."""

    name: str

    def reset(self, seed: int) -> None:
        """Re-seed the policy's own randomness."""

    def act(self, observation: str, info: dict[str, Any], env: gym.Env) -> str:
        """The next command."""
        ...


class RandomPolicy:
    """Uniform over :func:`candidate_commands` (an empty command when there are none)."""

    name = "random"
    needs_privileged = False

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def reset(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def act(self, observation: str, info: dict[str, Any], env: gym.Env) -> str:
        actions = candidate_commands(env, observation, info)
        return self.rng.choice(actions) if actions else ""


class ExpertPolicy:
    """Follows the privileged expert (``info["privileged"]["expert_action"]``)."""

    name = "expert"
    needs_privileged = True

    def reset(self, seed: int) -> None:
        del seed

    def act(self, observation: str, info: dict[str, Any], env: gym.Env) -> str:
        privileged = info.get("privileged")
        if privileged is None:
            raise ValueError("the expert policy needs an env made with privileged=True")
        return privileged.get("expert_action") or ""


POLICIES: dict[str, type] = {"random": RandomPolicy, "expert": ExpertPolicy}
