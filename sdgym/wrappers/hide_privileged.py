"""Remove the privileged channel: what every evaluation path and every student sees."""

from __future__ import annotations

from typing import Any

import gymnasium as gym


def strip_privileged(info: dict[str, Any]) -> dict[str, Any]:
    """Copy of ``info`` without ``privileged`` (nor a vector env's ``_privileged`` mask)."""
    return {key: value for key, value in info.items() if key not in ("privileged", "_privileged")}


class HidePrivileged(gym.Wrapper):
    """Drops ``info["privileged"]`` and stops the env from computing it.

    Example:
        >>> env = HidePrivileged(gym.make("sdgym/SearchQA-v0", size="tiny"))
        >>> "privileged" in env.reset(seed=0)[1]
        False
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        if hasattr(env.unwrapped, "privileged"):
            env.unwrapped.privileged = False

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        return observation, strip_privileged(info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, reward, terminated, truncated, strip_privileged(info)
