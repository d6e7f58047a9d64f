"""Share of states where :class:`~sdgym.wrappers.AdmissibleDiscrete`'s slots hold the expert's action.

For each installed env, plays the privileged expert from reset on a few tasks (at most the env's
step limit) and, at every state, checks whether the expert's next action is among the wrapper's
``max_actions`` slots (chosen from public text only, :func:`~sdgym.wrappers.admissible_discrete.
ranked_commands`), among the first ``max_actions`` candidates in the env's order (what the
wrapper kept before ranking), and among all candidates. Prints one JSON line per env.

Usage: ``python benchmarks/admissible_slots.py [--tasks 6] [--max-actions 32]``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import gymnasium as gym

import sdgym  # noqa: F401
from sdgym.registration import ENVIRONMENTS, implemented
from sdgym.wrappers import AdmissibleDiscrete
from sdgym.wrappers.admissible_discrete import candidate_commands

SETUPS: dict[str, tuple[dict[str, Any], str]] = {
    "sdgym/SearchQA-v0": ({"size": "tiny"}, "test"),
    "sdgym/WebShop-v0": ({"size": "tiny"}, "test"),
    "sdgym/ALFWorld-v0": ({}, "test"),
    "sdgym/ScienceWorld-v0": ({}, "test"),
}
"""Env id -> (make kwargs, split)."""


def _task_indices(env: gym.Env, split: str, count: int) -> list[int]:
    core = env.unwrapped
    if hasattr(core, "task_index_of"):  # ScienceWorld: one variation of each of ``count`` tasks
        names = core.catalog.task_names
        step = max(1, len(names) // count)
        return [core.task_index_of(name, split=split) for name in names[::step][:count]]
    total = core.task_count(split)
    return [i * total // count for i in range(count)]


def measure(env_id: str, tasks: int, max_actions: int) -> dict[str, Any]:
    kwargs, split = SETUPS[env_id]
    env = AdmissibleDiscrete(gym.make(env_id, **kwargs), max_actions=max_actions)
    limit = env.spec.max_episode_steps if env.spec else 30
    counts = {"states": 0, "ranked": 0, "first_k": 0, "all": 0, "candidates": 0}
    try:
        for index in _task_indices(env, split, tasks):
            _, info = env.reset(options={"split": split, "task_index": index})
            observation = env.task_text
            for _ in range(limit):
                expert = info["privileged"]["expert_action"]
                if not expert:
                    break
                everything = [c.lower() for c in candidate_commands(env.env, observation, info)]
                counts["states"] += 1
                counts["candidates"] += len(everything)
                counts["all"] += expert.lower() in everything
                counts["first_k"] += expert.lower() in everything[:max_actions]
                counts["ranked"] += expert.lower() in [c.lower() for c in env.candidates]
                observation, _, terminated, truncated, info = env.env.step(expert)
                env.featurise(observation, info)
                if terminated or truncated:
                    break
    finally:
        env.close()
    states = max(counts["states"], 1)
    return {
        "env": env_id,
        "split": split,
        "tasks": tasks,
        "states": counts["states"],
        "mean_candidates": round(counts["candidates"] / states, 1),
        "share_in_slots": round(counts["ranked"] / states, 3),
        "share_in_first_k": round(counts["first_k"] / states, 3),
        "share_in_all_candidates": round(counts["all"] / states, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--max-actions", type=int, default=32)
    parser.add_argument("--env", nargs="*", default=None)
    args = parser.parse_args()
    for entry in ENVIRONMENTS:
        if not (implemented(entry) and entry.installed()):
            continue
        if args.env and not any(e in entry.env_id for e in args.env):
            continue
        print(json.dumps(measure(entry.env_id, args.tasks, args.max_actions)), flush=True)


if __name__ == "__main__":
    main()
