"""Env pools: the batch of sub-envs a :class:`~agents.rollout.RolloutEngine` drives.

A pool resets ``num_envs`` sub-envs with one seed each and steps them with one text command each;
results come back per sub-env, in order (one info dict per sub-env, not Gymnasium's batched
info). :class:`VectorEnvPool` is a Gymnasium vector env in this process; the Ray pool
(:mod:`agents.ray_pool`) fans the same calls out to actors that each hold a ``VectorEnvPool``.

Finished sub-envs keep receiving (ignored) commands until the whole batch is done; the vector
env auto-resets them, exactly as in a plain ``gym.make_vec`` loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import gymnasium as gym

from sdgym.wrappers import HidePrivileged, TaggedActions

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


def make_vector_env(spec: EnvPoolSpec, num_envs: int) -> gym.vector.VectorEnv:
    """A Gymnasium vector env of ``num_envs`` sub-envs with text (tagged) actions."""
    import sdgym  # noqa: F401  (registers the env ids, also inside a fresh worker process)

    wrappers: list[Callable[[gym.Env], gym.Env]] = [TaggedActions]
    if spec.hide_privileged:
        wrappers.insert(0, HidePrivileged)
    return gym.make_vec(spec.env_id, num_envs=num_envs,
                        vectorization_mode=spec.vectorization_mode, wrappers=wrappers,
                        **spec.env_kwargs)


class VectorEnvPool:
    """An :class:`EnvPool` backed by one Gymnasium vector env in this process."""

    def __init__(self, spec: EnvPoolSpec, num_envs: int) -> None:
        if num_envs < 1:
            raise ValueError(f"an env pool needs at least one sub-env, got {num_envs}")
        self.spec = spec
        self.num_envs = num_envs
        self.vector = make_vector_env(spec, num_envs)

    def reset(self, seeds: Sequence[int],
              options: dict[str, Any] | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
        """Reset sub-env ``i`` with ``seeds[i]``."""
        if len(seeds) != self.num_envs:
            raise ValueError(f"need {self.num_envs} seeds (one per sub-env), got {len(seeds)}")
        observations, infos = self.vector.reset(seed=[int(s) for s in seeds], options=options)
        return list(observations), [info_at(infos, i) for i in range(self.num_envs)]

    def step(self, actions: Sequence[str]) -> PoolStep:
        """Step sub-env ``i`` with ``actions[i]``."""
        if len(actions) != self.num_envs:
            raise ValueError(f"need {self.num_envs} actions (one per sub-env), got {len(actions)}")
        observations, rewards, terminated, truncated, infos = self.vector.step(tuple(actions))
        return PoolStep(list(observations), [float(r) for r in rewards],
                        [bool(t) for t in terminated], [bool(t) for t in truncated],
                        [info_at(infos, i) for i in range(self.num_envs)])

    def task_count(self, split: str) -> int:
        """Number of tasks in ``split`` (asked of the first sub-env)."""
        return int(self.vector.call("task_count", split)[0])

    def close(self) -> None:
        """Close the vector env and every sub-env."""
        self.vector.close()


def make_env_pool(spec: EnvPoolSpec, num_envs: int, rollout_backend: str = "local",
                  ray_address: str | None = None, ray_num_workers: int = 2) -> EnvPool:
    """The pool for ``rollout_backend`` (``"local"`` or ``"ray"``)."""
    if rollout_backend == "local":
        return VectorEnvPool(spec, num_envs)
    if rollout_backend == "ray":
        from agents.ray_pool import RayEnvPool

        return RayEnvPool(spec, num_envs, num_workers=ray_num_workers, address=ray_address)
    raise ValueError(f"rollout_backend must be one of {ROLLOUT_BACKENDS}, got {rollout_backend!r}")
