"""A Ray env pool: the sub-envs of a rollout split over Ray actors, driven like a local pool.

Each actor (:class:`EnvWorker`) holds a contiguous slice of the sub-envs as a
:class:`~agents.pools.local.VectorEnvPool`. ``reset`` and ``step`` send every actor its slice at
once and gather the results in sub-env order, so the rollout engine cannot tell this pool from
the local one and produces the same rows for the same seeds.

Worker failure: the pool logs the reset seeds and every command of the current episode batch. When
an actor dies (``RayActorError``), a fresh actor is started, its sub-envs are reset with the same
seeds and replayed command by command, and the call that failed is answered from the replay.
Episodes are deterministic given seeds and commands; the replay checks this (the observations
before the failed call must match what the dead actor returned) and raises instead of returning
different data. Nothing is lost and nothing is returned twice.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import Any

from agents.pools.base import EnvPoolSpec, PoolStep
from agents.pools.local import VectorEnvPool
from agents.ray_runtime import acquire_ray, import_ray, release_ray

logger = logging.getLogger(__name__)


class EnvWorker:
    """The body of one env actor: a local pool of ``num_envs`` sub-envs."""

    def __init__(self, spec: EnvPoolSpec, num_envs: int) -> None:
        self.pool = VectorEnvPool(spec, num_envs)

    def ready(self) -> bool:
        """Answers once the sub-envs are built."""
        return True

    def reset(self, seeds: Sequence[int],
              options: dict[str, Any] | None) -> tuple[list[Any], list[dict[str, Any]]]:
        """Reset the slice (see :meth:`VectorEnvPool.reset`)."""
        return self.pool.reset(seeds, options)

    def step(self, actions: Sequence[str]) -> PoolStep:
        """Step the slice (see :meth:`VectorEnvPool.step`)."""
        return self.pool.step(actions)

    def task_count(self, split: str) -> int:
        """Tasks in ``split`` (see :meth:`VectorEnvPool.task_count`)."""
        return self.pool.task_count(split)

    def replay(self, seeds: Sequence[int], options: dict[str, Any] | None,
               actions: Sequence[Sequence[str]]) -> tuple[list[Any], Any]:
        """Reset, then step with every command list in ``actions``.

        Returns the observations before the last call and the last call's result (the reset's
        ``(observations, infos)`` when ``actions`` is empty, else a :class:`PoolStep`).
        """
        before: list[Any] = []
        result: Any = self.pool.reset(seeds, options)
        for commands in actions:
            before = list(result[0])
            result = self.pool.step(commands)
        return before, result

    def close(self) -> None:
        """Close the sub-envs (stops engines such as ScienceWorld's JVM cleanly)."""
        self.pool.close()


@functools.cache
def _remote_worker_class() -> Any:
    return import_ray().remote(max_restarts=0, max_task_retries=0)(EnvWorker)


def split_sizes(total: int, parts: int) -> list[int]:
    """``total`` items in ``parts`` contiguous slices whose sizes differ by at most one."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


class RayEnvPool:
    """An :class:`~agents.pools.base.EnvPool` whose sub-envs live in Ray actors (module docstring).

    Args:
        spec: What each sub-env is.
        num_envs: Sub-envs in total.
        num_workers: Actors; each holds ``num_envs / num_workers`` sub-envs (capped at
            ``num_envs``).
        address: Ray cluster to join; ``None`` starts (or reuses) a local instance.
        num_cpus: CPUs of a local instance (default: this machine's).
        max_replacements: Dead actors replaced within one call before giving up with an error.
        worker_options: Extra Ray actor options (e.g. ``{"num_cpus": 1}`` to spread actors
            over a cluster; by default an actor holds no CPU while it runs).
    """

    def __init__(self, spec: EnvPoolSpec, num_envs: int, num_workers: int = 2,
                 address: str | None = None, num_cpus: int | None = None,
                 max_replacements: int = 3, worker_options: dict[str, Any] | None = None) -> None:
        if num_envs < 1:
            raise ValueError(f"an env pool needs at least one sub-env, got {num_envs}")
        if num_workers < 1:
            raise ValueError(f"ray_num_workers must be >= 1, got {num_workers}")
        self.spec = spec
        self.num_envs = num_envs
        self.max_replacements = max_replacements
        self.worker_options = dict(worker_options or {})
        self.replacements = 0
        """Actors replaced so far (each one's episodes were replayed)."""
        sizes = split_sizes(num_envs, min(num_workers, num_envs))
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        self.slices = [slice(s, s + n) for s, n in zip(starts, sizes)]
        self._seeds: list[int] = []
        self._options: dict[str, Any] | None = None
        self._actions: list[list[str]] = []
        self._observations: list[Any] = []
        self.workers: list[Any] = []
        acquire_ray(address, num_cpus)
        self._holds_ray = True
        try:
            self.workers = [self._start_worker(part) for part in self.slices]
            import_ray().get([worker.ready.remote() for worker in self.workers])
        except Exception as error:
            self.close()
            raise RuntimeError(f"could not start Ray env workers for {spec.env_id}: "
                               f"{error}") from error

    def _start_worker(self, part: slice) -> Any:
        worker_class = _remote_worker_class()
        if self.worker_options:
            worker_class = worker_class.options(**self.worker_options)
        return worker_class.remote(self.spec, part.stop - part.start)

    # ----------------------------------------------------------------- env pool API
    def reset(self, seeds: Sequence[int],
              options: dict[str, Any] | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
        """Reset sub-env ``i`` with ``seeds[i]`` (on whichever actor holds it)."""
        if len(seeds) != self.num_envs:
            raise ValueError(f"need {self.num_envs} seeds (one per sub-env), got {len(seeds)}")
        self._seeds, self._options = [int(s) for s in seeds], options
        self._actions = []
        calls = [worker.reset.remote(self._seeds[part], options)
                 for worker, part in zip(self.workers, self.slices)]
        results = self._gather(calls)
        observations = [obs for result in results for obs in result[0]]
        infos = [info for result in results for info in result[1]]
        self._observations = observations
        return observations, infos

    def step(self, actions: Sequence[str]) -> PoolStep:
        """Step sub-env ``i`` with ``actions[i]``; dead actors are replaced and replayed."""
        if len(actions) != self.num_envs:
            raise ValueError(f"need {self.num_envs} actions (one per sub-env), got {len(actions)}")
        if not self._seeds:
            raise RuntimeError("reset the pool before stepping it")
        self._actions.append([str(a) for a in actions])
        calls = [worker.step.remote(self._actions[-1][part])
                 for worker, part in zip(self.workers, self.slices)]
        results = self._gather(calls)
        merged = PoolStep(*([value for result in results for value in result[field]]
                            for field in range(len(PoolStep._fields))))
        self._observations = merged.observations
        return merged

    def task_count(self, split: str) -> int:
        """Tasks in ``split`` (asked of the first actor)."""
        ray = import_ray()
        return int(ray.get(self.workers[0].task_count.remote(split), timeout=60))

    def close(self) -> None:
        """Close every actor's sub-envs, end the actors, and release Ray."""
        ray = import_ray()
        workers, self.workers = self.workers, []
        if workers and ray.is_initialized():
            try:
                ray.get([worker.close.remote() for worker in workers], timeout=60)
            except Exception as error:  # a dead actor has nothing left to close
                logger.debug("closing Ray env workers: %s", error)
            for worker in workers:
                ray.kill(worker)
        if self._holds_ray:
            self._holds_ray = False
            release_ray()

    def __enter__(self) -> RayEnvPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ failures
    def _gather(self, calls: list[Any]) -> list[Any]:
        """Results of one call per actor, in order; a dead actor's result comes from a replay."""
        ray = import_ray()
        results = []
        for index, call in enumerate(calls):
            try:
                results.append(ray.get(call))
            except ray.exceptions.RayActorError as error:
                results.append(self._replace_and_replay(index, error))
        return results

    def _replace_and_replay(self, index: int, error: Exception) -> Any:
        ray = import_ray()
        part = self.slices[index]
        for attempt in range(1, self.max_replacements + 1):
            logger.warning("Ray env worker %d died (%s); replacing it and replaying %d step(s) "
                           "(attempt %d)", index, type(error).__name__, len(self._actions), attempt)
            ray.kill(self.workers[index])
            self.workers[index] = self._start_worker(part)
            self.replacements += 1
            try:
                before, result = ray.get(self.workers[index].replay.remote(
                    self._seeds[part], self._options,
                    [commands[part] for commands in self._actions]))
            except ray.exceptions.RayActorError as again:
                error = again
                continue
            if self._actions and before != self._observations[part]:
                raise RuntimeError(
                    f"replaying sub-envs {part.start}..{part.stop - 1} of {self.spec.env_id} "
                    "after a worker failure gave different observations: the env is not "
                    "deterministic given seeds and commands, so the lost steps cannot be recovered")
            return result
        raise RuntimeError(f"Ray env worker {index} died {self.max_replacements} times in one "
                           f"call; giving up ({error})") from error
