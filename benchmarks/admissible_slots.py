"""Share of states where :class:`~sdgym.wrappers.AdmissibleDiscrete`'s slots hold the expert's action.

For each installed env, plays the privileged expert from reset on a few tasks (at most the env's
step limit) and, at every state, checks whether the expert's next action is among the wrapper's
``max_actions`` slots (chosen from public text only: the env's own ranking where it has one,
ScienceWorld's :func:`~sdgym.envs.scienceworld.candidates.rank_candidates`, else
:func:`~sdgym.wrappers.admissible_discrete.ranked_commands`), among the first ``max_actions``
candidates in the env's order, and among all candidates. Where the expert's action is in a slot
the expert plays that slot's command (what the wrapper's ``step(index)`` sends), else the action
itself; how many of those slot steps the env rejects or answers with an unplanned "Ambiguous
request" is reported too. With
``--probe N``, N other slots per state (chosen at random, seeded) are played on a copy of the env
(``copy.deepcopy``: a new env that replays the episode) and counted the same way. Prints one
JSON line per env.

Usage: ``python benchmarks/admissible_slots.py [--tasks 6] [--max-actions 32] [--env NAME ...]
[--probe N]``; ScienceWorld alone, as measured in docs/environments.md:
``python benchmarks/admissible_slots.py --env ScienceWorld --tasks 10``.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
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
    "sdgym/ScienceWorld-v0": ({"expert_words": "list"}, "test"),
}
"""Env id -> (make kwargs, split)."""

AMBIGUOUS = "Ambiguous request"


def _task_indices(env: gym.Env, split: str, count: int) -> list[int]:
    core = env.unwrapped
    if hasattr(core, "task_index_of"):  # ScienceWorld: one variation of each of ``count`` tasks
        names = core.catalog.task_names
        step = max(1, len(names) // count)
        return [core.task_index_of(name, split=split) for name in names[::step][:count]]
    total = core.task_count(split)
    return [i * total // count for i in range(count)]


def _refused(observation: str, info: dict[str, Any]) -> str | None:
    """``"invalid"``, ``"ambiguous"`` or ``None`` (accepted) for the answer to a slot."""
    if not info.get("action_valid", True):
        return "invalid"
    return "ambiguous" if observation.startswith(AMBIGUOUS) else None


def _probe(env: AdmissibleDiscrete, slots: list[int]) -> list[str | None]:
    """Play each slot on its own copy of the env; what each answer was (:func:`_refused`)."""
    results = []
    for slot in slots:
        twin = copy.deepcopy(env.env)
        try:
            observation, _, _, _, info = twin.step(env.candidates[slot])
            results.append(_refused(observation, info))
        finally:
            twin.close()
    return results


def measure(env_id: str, tasks: int, max_actions: int, probe: int = 0) -> dict[str, Any]:
    kwargs, split = SETUPS[env_id]
    env = AdmissibleDiscrete(gym.make(env_id, **kwargs), max_actions=max_actions)
    limit = env.spec.max_episode_steps if env.spec else 30
    counts = {"states": 0, "ranked": 0, "first_k": 0, "all": 0, "candidates": 0,
              "slot_steps": 0, "slot_refused": 0, "probes": 0, "probe_invalid": 0,
              "probe_ambiguous": 0}
    rng = random.Random(0)
    try:
        for index in _task_indices(env, split, tasks):
            _, info = env.reset(options={"split": split, "task_index": index})
            observation = env.task_text
            for _ in range(limit):
                expert = info["privileged"]["expert_action"]
                if not expert:
                    break
                everything = [c.lower() for c in candidate_commands(env.env, observation, info)]
                slots = [c.lower() for c in env.candidates]
                counts["states"] += 1
                counts["candidates"] += len(everything)
                counts["all"] += expert.lower() in everything
                counts["first_k"] += expert.lower() in everything[:max_actions]
                counts["ranked"] += expert.lower() in slots
                if probe:
                    others = [i for i, c in enumerate(slots) if c != expert.lower()]
                    for result in _probe(env, rng.sample(others, min(probe, len(others)))):
                        counts["probes"] += 1
                        counts["probe_invalid"] += result == "invalid"
                        counts["probe_ambiguous"] += result == "ambiguous"
                plan = info["privileged"].get("expert_plan") or []
                in_slot = expert.lower() in slots
                command = env.candidates[slots.index(expert.lower())] if in_slot else expert
                observation, _, terminated, truncated, info = env.env.step(command)
                env.featurise(observation, info)  # what env.step(slot) does
                if in_slot:
                    refused = _refused(observation, info)
                    expected_prompt = len(plan) > 1 and plan[1].strip().isdigit()
                    counts["slot_steps"] += 1
                    counts["slot_refused"] += refused is not None and not (
                        refused == "ambiguous" and expected_prompt)
                if terminated or truncated:
                    break
    finally:
        env.close()
    states = max(counts["states"], 1)
    result = {
        "env": env_id,
        "split": split,
        "tasks": tasks,
        "max_actions": max_actions,
        "states": counts["states"],
        "mean_candidates": round(counts["candidates"] / states, 1),
        "share_in_slots": round(counts["ranked"] / states, 3),
        "share_in_first_k": round(counts["first_k"] / states, 3),
        "share_in_all_candidates": round(counts["all"] / states, 3),
        "expert_slot_steps_refused": f"{counts['slot_refused']}/{counts['slot_steps']}",
    }
    if probe:
        result["probed_slots"] = counts["probes"]
        result["probed_invalid"] = counts["probe_invalid"]
        result["probed_ambiguous"] = counts["probe_ambiguous"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--max-actions", type=int, default=32)
    parser.add_argument("--env", nargs="*", default=None,
                        help="only the envs whose id contains one of these (e.g. ScienceWorld)")
    parser.add_argument("--probe", type=int, default=0,
                        help="other slots per state to play on a copy of the env (slow)")
    args = parser.parse_args()
    for entry in ENVIRONMENTS:
        if not (implemented(entry) and entry.installed()):
            continue
        if args.env and not any(e in entry.env_id for e in args.env):
            continue
        print(json.dumps(measure(entry.env_id, args.tasks, args.max_actions, args.probe)),
              flush=True)


if __name__ == "__main__":
    main()
