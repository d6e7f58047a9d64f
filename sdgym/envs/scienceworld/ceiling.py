"""The expert ceiling: how often the gold path wins within the env's step limit.

ScienceWorld's gold paths run from a dozen to several hundred steps, while ``sdgym/ScienceWorld-v0``
is registered with a 30-step limit (the benchmark protocol's). :func:`expert_outcome` plays the
privileged ``expert_action`` for at most ``limit`` steps; :func:`measure` samples ``per_task``
variations of each task in a split (evenly spaced over the task's variations there) and
weights each task by its variation count, giving the share of the split's ``(task, variation)``
pairs the expert wins within the limit. Measured numbers are in :data:`EXPERT_CEILING` and the
README; rerun with ``python -m sdgym.envs.scienceworld.ceiling --split test --per-task 2``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

STEP_LIMIT = 30
"""``max_episode_steps`` of ``sdgym/ScienceWorld-v0``."""

EXPERT_CEILING: dict[str, float] = {"val": 0.407, "test": 0.445}
"""Split -> estimated share of its variations the expert wins within :data:`STEP_LIMIT` steps
(measured 2026-12-01 with :func:`measure`, 2 variations of each of the 30 tasks, weighted by
each task's variation count: val 35 of 60 sampled won, test 30 of 60; train not measured)."""


@dataclass(frozen=True)
class ExpertOutcome:
    """One variation: whether the expert won within the limit, its steps, and its gold length."""

    task: str
    variation: int
    won: bool
    steps: int
    gold_length: int


def expert_outcome(env: Any, split: str, task_index: int, limit: int = STEP_LIMIT) -> ExpertOutcome:
    """Play ``expert_action`` from reset for at most ``limit`` steps on a ScienceWorldEnv."""
    _, info = env.reset(options={"split": split, "task_index": task_index})
    gold = len(info["privileged"]["expert_plan"] or [])
    steps, won = 0, False
    while steps < limit and info["privileged"]["expert_action"] is not None:
        _, _, terminated, _, info = env.step(info["privileged"]["expert_action"])
        steps += 1
        if terminated:
            won = bool(info["won"])
            break
    task, variation = env.current_task
    return ExpertOutcome(task, variation, won, steps, gold)


def sampled_variations(variations: Sequence[int], per_task: int) -> list[int]:
    """``per_task`` variations evenly spaced over ``variations`` (all if fewer)."""
    if len(variations) <= per_task:
        return list(variations)
    step = len(variations) / per_task
    return [variations[int(i * step)] for i in range(per_task)]


def measure(
    split: str, per_task: int = 2, limit: int = STEP_LIMIT, task_names: Sequence[str] | None = None
) -> dict[str, Any]:
    """Expert outcomes on sampled variations of every task, and the weighted ceiling."""
    from sdgym.envs.scienceworld.env import ScienceWorldEnv

    env = ScienceWorldEnv(task_names=task_names)
    outcomes: list[ExpertOutcome] = []
    weighted = total = 0
    try:
        for task in env.catalog.task_names:
            variations = env.catalog.variations(split, task)
            if not variations:
                continue
            chosen = sampled_variations(variations, per_task)
            results = [
                expert_outcome(env, split, env.task_index_of(task, v, split), limit)
                for v in chosen
            ]
            outcomes.extend(results)
            weighted += len(variations) * sum(r.won for r in results) / len(results)
            total += len(variations)
    finally:
        env.close()
    return {
        "split": split,
        "limit": limit,
        "per_task": per_task,
        "ceiling": weighted / total if total else 0.0,
        "sampled_won": sum(r.won for r in outcomes),
        "sampled": len(outcomes),
        "outcomes": [asdict(r) for r in outcomes],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test", choices=("train", "val", "test"))
    parser.add_argument("--per-task", type=int, default=2)
    parser.add_argument("--limit", type=int, default=STEP_LIMIT)
    parser.add_argument("--tasks", nargs="*", default=None)
    args = parser.parse_args(argv)
    result = measure(args.split, args.per_task, args.limit, args.tasks)
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
