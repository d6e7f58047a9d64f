"""The local env pool: one Gymnasium vector env in this process (protocol: :mod:`agents.pools.base`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from agents.pools.base import EnvPoolSpec, PoolStep, info_at
from sdgym.process_lifetime import tied_async_worker
from sdgym.wrappers import HidePrivileged, TaggedActions


def make_vector_env(spec: EnvPoolSpec, num_envs: int) -> gym.vector.VectorEnv:
    """A Gymnasium vector env of ``num_envs`` sub-envs with text (tagged) actions. In ``async``
    mode each sub-env process is tied to this one (:mod:`sdgym.process_lifetime`): it ends when
    this process dies, even by ``kill -9``, instead of running on as an orphan."""
    import sdgym  # noqa: F401  (registers the env ids, also inside a fresh worker process)

    wrappers: list[Callable[[gym.Env], gym.Env]] = [TaggedActions]
    if spec.hide_privileged:
        wrappers.insert(0, HidePrivileged)
    mode = getattr(spec.vectorization_mode, "value", spec.vectorization_mode)  # str or VectorizeMode
    tied = {"worker": tied_async_worker()} if mode == "async" else {}
    return gym.make_vec(spec.env_id, num_envs=num_envs,
                        vectorization_mode=spec.vectorization_mode, vector_kwargs=tied,
                        wrappers=wrappers, **spec.env_kwargs)


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
