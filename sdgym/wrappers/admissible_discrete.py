"""Discrete(K) over the admissible commands, with ``action_masks()``, for sb3-contrib MaskablePPO."""

from __future__ import annotations

import re
import zlib
from typing import Any

import gymnasium as gym
import numpy as np

_TOKEN = re.compile(r"[a-z0-9]+")


def candidate_commands(env: gym.Env, observation: str, info: dict[str, Any]) -> list[str]:
    """Commands an agent can choose from now.

    The env's own discrete action set (``candidate_actions(observation, info)`` on the unwrapped
    env) when it defines one -- Search-QA (open action set) and WebShop (free-text search bar)
    do, and it takes precedence over the admissible list; else ``info["admissible_actions"]``;
    else the list computed on request (``get_admissible_actions()``, e.g. ScienceWorld); else
    nothing.
    """
    core = env.unwrapped
    if hasattr(core, "candidate_actions"):
        return list(core.candidate_actions(observation, info))
    actions = info.get("admissible_actions")
    if actions:
        return list(actions)
    if hasattr(core, "get_admissible_actions"):
        return list(core.get_admissible_actions() or [])
    return []


def hashed_bag_of_words(text: str, dim: int) -> np.ndarray:
    """L2-normalised hashed bag of words (unigrams and bigrams, crc32 buckets) of ``text``."""
    vector = np.zeros(dim, dtype=np.float32)
    tokens = _TOKEN.findall(text.lower())
    for gram in tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]:
        vector[zlib.crc32(gram.encode()) % dim] += 1.0
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


class AdmissibleDiscrete(gym.Wrapper):
    """Exposes the env's current candidate commands as ``Discrete(max_actions)``.

    Candidates are :func:`candidate_commands`: the env's own ``candidate_actions(observation,
    info)`` where it defines them (open or free-text action sets), else the admissible list. The
    observation becomes a ``Box``: hashed bag-of-words of the observation, then one block per
    candidate slot (zeros for empty slots). ``action_masks()`` marks the live slots. An action index outside the
    mask is sent as an empty command, which the env answers with an invalid-action observation.
    """

    def __init__(
        self, env: gym.Env, max_actions: int = 32, obs_dim: int = 256, action_dim: int = 32
    ) -> None:
        super().__init__(env)
        self.max_actions = max_actions
        self.obs_dim = obs_dim
        self.action_dim = action_dim
        self.action_space = gym.spaces.Discrete(max_actions)
        size = obs_dim + max_actions * action_dim
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32)
        self.candidates: list[str] = []

    def _candidates(self, observation: str, info: dict[str, Any]) -> list[str]:
        return candidate_commands(self.env, observation, info)[: self.max_actions]

    def featurise(self, observation: str, info: dict[str, Any]) -> np.ndarray:
        """Feature vector of the observation and the current candidates (sets ``candidates``)."""
        self.candidates = self._candidates(observation, info)
        blocks = [hashed_bag_of_words(observation, self.obs_dim)]
        for slot in range(self.max_actions):
            text = self.candidates[slot] if slot < len(self.candidates) else ""
            blocks.append(hashed_bag_of_words(text, self.action_dim))
        return np.concatenate(blocks).astype(np.float32)

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the slots that hold a candidate command."""
        mask = np.zeros(self.max_actions, dtype=bool)
        mask[: len(self.candidates)] = True
        return mask

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        return self.featurise(observation, info), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        try:
            index = int(action)
        except (TypeError, ValueError):
            index = -1
        command = self.candidates[index] if 0 <= index < len(self.candidates) else ""
        observation, reward, terminated, truncated, info = self.env.step(command)
        info = {**info, "command": command}
        return self.featurise(observation, info), reward, terminated, truncated, info
