"""A policy backend that lives in a Ray actor: generation on a GPU node, rollouts driven elsewhere.

``RayActorBackend(functools.partial(VLLMBackend, "Qwen/Qwen3-1.7B"), num_gpus=1)`` starts one
actor that builds the vLLM engine on a GPU of the cluster; ``generate`` and ``score`` are remote
calls, so a :class:`~agents.rollout.RolloutEngine` (with local or Ray env workers) uses it like
any backend. Any backend works (the CPU tests use :class:`~agents.backends.hf.HFBackend` on the
tiny model). The factory is pickled to the actor, so it must be importable there (a class or a
``functools.partial`` of one, not a lambda from an unimportable script).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from agents.backends.base import Generation, PolicyBackend, SamplingParams
from agents.ray_runtime import acquire_ray, import_ray, release_ray


class BackendWorker:
    """The body of the actor: one backend built by ``factory``."""

    def __init__(self, factory: Callable[[], PolicyBackend]) -> None:
        self.backend = factory()

    def ready(self) -> bool:
        """Answers once the backend is built."""
        return True

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[Generation]:
        """See :meth:`PolicyBackend.generate`."""
        return self.backend.generate(prompts, params)

    def score(self, prompt_ids: Sequence[Sequence[int]],
              response_ids: Sequence[Sequence[int]]) -> list[list[float]]:
        """See :meth:`PolicyBackend.score`."""
        return self.backend.score(prompt_ids, response_ids)


@functools.cache
def _remote_worker_class() -> Any:
    return import_ray().remote(max_restarts=0)(BackendWorker)


class RayActorBackend(PolicyBackend):
    """A :class:`PolicyBackend` whose model runs in a Ray actor (see the module docstring).

    Args:
        factory: Builds the backend inside the actor.
        num_gpus: GPUs the actor holds (``0`` on CPU).
        num_cpus: CPUs the actor holds.
        address: Ray cluster to join; ``None`` starts (or reuses) a local instance.
    """

    def __init__(self, factory: Callable[[], PolicyBackend], *, num_gpus: float = 0,
                 num_cpus: float = 1, address: str | None = None) -> None:
        acquire_ray(address)
        self._holds_ray = True
        ray = import_ray()
        self.actor = _remote_worker_class().options(num_gpus=num_gpus, num_cpus=num_cpus).remote(
            factory)
        try:
            ray.get(self.actor.ready.remote())
        except Exception as error:
            self.close()
            raise RuntimeError(f"could not start the backend actor: {error}") from error

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[Generation]:
        """Sample in the actor; results in prompt order."""
        return import_ray().get(self.actor.generate.remote(list(prompts), params))

    def score(self, prompt_ids: Sequence[Sequence[int]],
              response_ids: Sequence[Sequence[int]]) -> list[list[float]]:
        """Score in the actor."""
        return import_ray().get(self.actor.score.remote(
            [list(p) for p in prompt_ids], [list(r) for r in response_ids]))

    def close(self) -> None:
        """End the actor (freeing its GPU) and release Ray."""
        ray = import_ray()
        if self.actor is not None and ray.is_initialized():
            ray.kill(self.actor)
        self.actor = None
        if self._holds_ray:
            self._holds_ray = False
            release_ray()
