"""The env pool protocol: the batch of sub-envs a :class:`~agents.rollout.RolloutEngine` drives.

A pool resets ``num_envs`` sub-envs with one seed each and steps them with one text command each;
results come back per sub-env, in order (one info dict per sub-env, not Gymnasium's batched
info). Implementations: :class:`~agents.pools.local.VectorEnvPool` (a Gymnasium vector env in this
process) and :class:`~agents.pools.ray.RayEnvPool` (the same calls fanned out to Ray actors that
each hold a ``VectorEnvPool``). :func:`agents.pools.make_env_pool` picks one.

Finished sub-envs keep receiving (ignored) commands until the whole batch is done; the vector
env auto-resets them, exactly as in a plain ``gym.make_vec`` loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

ROLLOUT_BACKENDS = ("local", "ray")
"""Where the sub-envs of a rollout live: this process, or Ray actors."""


class PoolStep(NamedTuple):
    """What one step of every sub-env returned, per sub-env and in order."""

    observations: list[Any]
    rewards: list[float]
    terminated: list[bool]
    truncated: list[bool]
    infos: list[dict[str, Any]]


@dataclass(frozen=True)
class EnvPoolSpec:
    """Everything needed to build the sub-envs of a pool (plain data: it travels to actors)."""

    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    hide_privileged: bool = False
    vectorization_mode: str = "sync"


class EnvPool(Protocol):
    """A batch of sub-envs stepped in lock-step with text commands."""

    num_envs: int

    def reset(self, seeds: Sequence[int],
              options: dict[str, Any] | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
        """Reset sub-env ``i`` with ``seeds[i]``; return observations and per-env infos."""

    def step(self, actions: Sequence[str]) -> PoolStep:
        """Step sub-env ``i`` with ``actions[i]``."""

    def task_count(self, split: str) -> int:
        """Number of tasks in ``split`` of the pool's env."""

    def close(self) -> None:
        """Release every sub-env (and worker)."""


def info_at(infos: dict[str, Any], index: int) -> dict[str, Any]:
    """The info dict of sub-env ``index`` from a vector env's batched info."""
    single: dict[str, Any] = {}
    for key, value in infos.items():
        if key.startswith("_"):
            continue
        mask = infos.get(f"_{key}")
        if mask is not None and not bool(mask[index]):
            continue
        single[key] = info_at(value, index) if isinstance(value, dict) else value[index]
    return single
