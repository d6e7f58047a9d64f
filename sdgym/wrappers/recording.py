"""Record episodes as JSON lines (public info only unless asked), for replay and datasets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym

from sdgym.cache import append_whole
from sdgym.wrappers.hide_privileged import strip_privileged


class RecordEpisodes(gym.Wrapper):
    """Appends one JSON object per finished episode to ``path``.

    Each record holds the task id, split, every (action, observation, reward, action_valid) turn,
    the return, ``won`` and ``score``. Privileged info is left out unless ``keep_privileged``.
    The file is opened in append mode and flushed per episode, so a crash loses at most the
    episode in flight.
    """

    def __init__(self, env: gym.Env, path: str | Path, keep_privileged: bool = False) -> None:
        super().__init__(env)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.keep_privileged = keep_privileged
        self._episode: dict[str, Any] | None = None

    def _public(self, info: dict[str, Any]) -> dict[str, Any]:
        return info if self.keep_privileged else strip_privileged(info)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        self._episode = {
            "task_id": info.get("task_id"),
            "split": info.get("split"),
            "initial_observation": observation,
            "turns": [],
            "return": 0.0,
        }
        if self.keep_privileged and "privileged" in info:
            self._episode["privileged"] = info["privileged"]
        return observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        if self._episode is not None:
            self._episode["turns"].append(
                {
                    "action": action,
                    "observation": observation,
                    "reward": float(reward),
                    "action_valid": bool(info.get("action_valid", True)),
                }
            )
            self._episode["return"] += float(reward)
            if terminated or truncated:
                public = self._public(info)
                self._episode.update(won=bool(public.get("won")), score=public.get("score"))
                append_whole(self.path, (json.dumps(self._episode, default=str) + "\n").encode())
                self._episode = None
        return observation, reward, terminated, truncated, info
