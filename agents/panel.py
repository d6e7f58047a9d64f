"""The evaluation protocol: a fixed task panel, a list of rollout seeds, every outcome kept.

A **task panel** is a seeded permutation of a split's task indices, cut to the panel size and
without replacement (the whole split when the size covers it). It depends on the split's size,
the panel size and the panel seed only, so every method, baseline and training seed is evaluated
on the same tasks. Each **rollout seed** changes the sampling (the backend's seed) and the env
seeds, so at T > 0 seeds give different samples; every episode samples from its own row stream,
so batching the seeds together changes no outcome. Results keep the outcome of every
(task, rollout seed) pair: intervals and paired comparisons are computed from them.

Used by training validation and the final test (:class:`baselines.trainer.Trainer`), ``sdgym
eval``, the reference baselines (:func:`baselines.evaluation.evaluate_policy`) and the benchmark.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from agents.backends.base import SamplingParams
from agents.backends.row_streams import stream_seed
from agents.rollout import RolloutBatch, RolloutEngine

PANEL_SEED = 0
"""The default panel seed (the same panel for everything that does not ask for another)."""


def task_panel(num_tasks: int, size: int | None = None, seed: int = PANEL_SEED) -> list[int]:
    """``size`` distinct task indices of a ``num_tasks`` split: a seeded permutation, cut.

    ``size`` None or ≥ ``num_tasks``: the whole split (in permuted order).
    """
    if num_tasks <= 0:
        raise ValueError(f"a task panel needs a split with tasks, got {num_tasks}")
    if size is not None and size <= 0:
        raise ValueError(f"task panel size must be positive, got {size}")
    order = np.random.default_rng(seed).permutation(num_tasks)
    return [int(i) for i in order[: num_tasks if size is None else min(size, num_tasks)]]


def env_seed(rollout_seed: int, position: int) -> int:
    """The env seed of slot ``position`` of a panel call under ``rollout_seed``."""
    return 50_000_017 * (rollout_seed + 1) + position


@dataclass
class PanelEvaluation:
    """Every (task, rollout seed) outcome of one evaluation, and summaries of them."""

    split: str
    task_indices: list[int]
    rollout_seeds: list[int]
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    """One per (task, rollout seed): task_index, task_id, rollout_seed, success, score, turns."""

    def _per_seed(self, key: str) -> list[float]:
        return [statistics.fmean(float(o[key]) for o in self.outcomes if o["rollout_seed"] == s)
                for s in self.rollout_seeds if any(o["rollout_seed"] == s for o in self.outcomes)]

    @property
    def success_per_seed(self) -> list[float]:
        return self._per_seed("success")

    @property
    def score_per_seed(self) -> list[float]:
        return self._per_seed("score")

    @property
    def success_mean(self) -> float:
        return statistics.fmean(float(o["success"]) for o in self.outcomes) if self.outcomes else 0.0

    @property
    def score_mean(self) -> float:
        return statistics.fmean(float(o["score"]) for o in self.outcomes) if self.outcomes else 0.0

    def per_task(self, key: str = "success") -> dict[int, float]:
        """Mean of ``key`` over rollout seeds, per task index."""
        values: dict[int, list[float]] = {}
        for o in self.outcomes:
            values.setdefault(int(o["task_index"]), []).append(float(o[key]))
        return {t: statistics.fmean(v) for t, v in values.items()}

    def to_record(self) -> dict[str, Any]:
        """JSON-ready: the raw outcomes plus per-seed and overall summaries."""
        seeds = self.success_per_seed
        return {**asdict(self), "episodes": len(self.task_indices),
                "episodes_total": len(self.outcomes),
                "success_per_seed": seeds, "score_per_seed": self.score_per_seed,
                "success_mean": self.success_mean,
                "success_std": statistics.pstdev(seeds) if len(seeds) > 1 else 0.0,
                "score_mean": self.score_mean}


PanelSlot = tuple[int, int]
"""``(task_index, rollout_seed)`` of one episode of a panel call."""


def evaluate_on_panel(engine: RolloutEngine, split: str, tasks: Sequence[int],
                      rollout_seeds: Sequence[int],
                      sampling: Callable[[int], SamplingParams],
                      on_batch: Callable[[RolloutBatch, list[PanelSlot | None]], None]
                      | None = None) -> PanelEvaluation:
    """Run each panel task once per rollout seed with ``engine`` (group size 1).

    Every (task, rollout seed) episode samples from its own row stream
    (:mod:`agents.backends.row_streams`), seeded by that rollout seed's sampling seed and the
    task's panel position, and resets its env with :func:`env_seed`; so its outcome depends on
    neither the other episodes of its call nor how episodes are batched. The episodes go
    ``engine.config.num_groups`` at a time, task-major: the rollout seeds of a task share a
    call, and with it the prefill of every prompt they have in common (their first one at
    least). A short last call is padded with repeats whose outcomes are dropped.

    ``sampling(rollout_seed)`` gives that seed's sampling params; they may differ in ``seed``
    only. ``on_batch(batch, slots)`` sees every rollout batch: ``slots[g]`` is group ``g``'s
    ``(task_index, rollout_seed)``, None for padding.
    """
    if engine.config.group_size != 1:
        raise ValueError("panel evaluation runs one episode per task: use group_size 1")
    if not tasks:
        raise ValueError("empty task panel")
    if not rollout_seeds:
        raise ValueError("no rollout seeds")
    params = {int(r): sampling(int(r)) for r in rollout_seeds}
    shared = dataclasses.replace(params[int(rollout_seeds[0])], seed=None)
    if any(dataclasses.replace(p, seed=None) != shared for p in params.values()):
        raise ValueError("the rollout seeds' sampling params may differ in their seed only")
    result = PanelEvaluation(split, [int(t) for t in tasks], [int(s) for s in rollout_seeds])
    episodes = [(position, int(task), int(r)) for position, task in enumerate(tasks)
                for r in rollout_seeds]
    width = engine.config.num_groups
    spare = max(result.rollout_seeds) + 1  # env seeds of padding episodes: no real one's
    for start in range(0, len(episodes), width):
        part = episodes[start:start + width]
        padding = [(len(tasks) + k, part[k % len(part)][1], spare)
                   for k in range(width - len(part))]
        env_seeds = [env_seed(r, position) for position, _, r in part + padding]
        sample_seeds = [stream_seed(r if params.get(r, shared).seed is None
                                    else params[r].seed, position)
                        for position, _, r in part + padding]
        batch = engine.collect(env_seeds, shared, split,
                               task_indices=[task for _, task, _ in part + padding],
                               sample_seeds=sample_seeds)
        slots: list[PanelSlot | None] = [(task, r) for _, task, r in part]
        slots += [None] * len(padding)
        if on_batch is not None:
            on_batch(batch, slots)
        refused: dict[int, int] = {}
        unparsable: dict[int, int] = {}
        for row in batch.rows:
            if row.parse_error:
                unparsable[row.traj_id] = unparsable.get(row.traj_id, 0) + 1
            elif not row.action_valid:
                refused[row.traj_id] = refused.get(row.traj_id, 0) + 1
        for episode in batch.episodes:
            slot = slots[episode.group_id]
            if slot is None:
                continue
            result.outcomes.append({
                "task_index": slot[0], "task_id": episode.task_id, "rollout_seed": slot[1],
                "success": bool(episode.won), "score": float(episode.score),
                "turns": int(episode.turns),
                "unparsable_turns": unparsable.get(episode.traj_id, 0),
                "refused_turns": refused.get(episode.traj_id, 0)})
    position = {t: i for i, t in enumerate(result.task_indices)}
    result.outcomes.sort(key=lambda o: (o["rollout_seed"], position[o["task_index"]]))
    return result
