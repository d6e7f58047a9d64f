"""Env pools: where the sub-envs of a rollout live (this process, or Ray actors).

``base`` holds the protocol and plain data, ``local`` the in-process pool, ``ray`` the Ray pool
(imported only when asked for: Ray is an optional extra).
"""

from __future__ import annotations

from agents.pools.base import ROLLOUT_BACKENDS, EnvPool, EnvPoolSpec, PoolStep, info_at
from agents.pools.local import VectorEnvPool, make_vector_env

__all__ = ["ROLLOUT_BACKENDS", "EnvPool", "EnvPoolSpec", "PoolStep", "VectorEnvPool", "info_at",
           "make_env_pool", "make_vector_env"]


def make_env_pool(spec: EnvPoolSpec, num_envs: int, rollout_backend: str = "local",
                  ray_address: str | None = None, ray_num_workers: int = 2) -> EnvPool:
    """The pool for ``rollout_backend`` (``"local"`` or ``"ray"``)."""
    if rollout_backend == "local":
        return VectorEnvPool(spec, num_envs)
    if rollout_backend == "ray":
        from agents.pools.ray import RayEnvPool

        return RayEnvPool(spec, num_envs, num_workers=ray_num_workers, address=ray_address)
    raise ValueError(f"rollout_backend must be one of {ROLLOUT_BACKENDS}, got {rollout_backend!r}")
