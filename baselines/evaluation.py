"""Evaluate a policy on a split over several rollout seeds (DESIGN.md §4, final performance)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym

from baselines.seed_layout import baseline_policy_seed
from sdgym.wrappers import HidePrivileged


@dataclass
class EvaluationResult:
    """Success and score per rollout seed, their mean and std, and the wall time."""

    env_id: str
    policy: str
    split: str
    episodes_per_seed: int
    seeds: list[int]
    success_per_seed: list[float] = field(default_factory=list)
    score_per_seed: list[float] = field(default_factory=list)
    seconds: float = 0.0
    task_indices: list[int] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    """One per (task, rollout seed), as :class:`agents.panel.PanelEvaluation` keeps them."""

    @property
    def success_mean(self) -> float:
        return statistics.fmean(self.success_per_seed) if self.success_per_seed else 0.0

    @property
    def success_std(self) -> float:
        return statistics.pstdev(self.success_per_seed) if len(self.success_per_seed) > 1 else 0.0

    @property
    def score_mean(self) -> float:
        return statistics.fmean(self.score_per_seed) if self.score_per_seed else 0.0

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready record (raw per-seed values plus summary statistics)."""
        record = asdict(self)
        record.update(success_mean=self.success_mean, success_std=self.success_std,
                      score_mean=self.score_mean)
        return record


def evaluate_policy(
    env_id: str,
    policy: Any,
    *,
    split: str = "test",
    episodes: int = 16,
    seeds: Sequence[int] = tuple(range(8)),
    env_kwargs: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> EvaluationResult:
    """Run ``policy`` on the task panel of ``split`` (:func:`agents.panel.task_panel`: the
    same ``episodes`` tasks every method and baseline is evaluated on) once per rollout seed.

    Privileged info is hidden unless the policy declares ``needs_privileged`` (the expert).
    ``result.outcomes`` keeps every (task, rollout seed) outcome.
    """
    from agents.panel import env_seed, task_panel

    env = gym.make(env_id, **(env_kwargs or {}))
    if not getattr(policy, "needs_privileged", False):
        env = HidePrivileged(env)
    result = EvaluationResult(env_id, policy.name, split, episodes, list(seeds))
    started = time.perf_counter()
    try:
        panel = task_panel(env.unwrapped.task_count(split), episodes)
        episodes = len(panel)
        result.episodes_per_seed = episodes
        result.task_indices = panel
        for seed in seeds:
            successes = scores = 0.0
            for position, index in enumerate(panel):
                policy.reset(baseline_policy_seed(seed, index))
                observation, info = env.reset(seed=env_seed(seed, position),
                                              options={"split": split, "task_index": index})
                turns = 0
                done = False
                while not done:
                    action = policy.act(observation, info, env)
                    observation, _, terminated, truncated, info = env.step(action)
                    done = terminated or truncated
                    turns += 1
                successes += float(info["won"])
                scores += float(info["score"])
                result.outcomes.append({"task_index": index, "task_id": str(info.get("task_id")),
                                        "rollout_seed": int(seed), "success": bool(info["won"]),
                                        "score": float(info["score"]), "turns": turns})
                if progress is not None:
                    progress(1)
            result.success_per_seed.append(successes / max(episodes, 1))
            result.score_per_seed.append(scores / max(episodes, 1))
    finally:
        env.close()
    result.seconds = time.perf_counter() - started
    return result
