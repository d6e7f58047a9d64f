"""Does a policy copy a detail of its task into its actions? ``python -m
benchmarks.protocol.copied_feature TRAJECTORIES.jsonl --task-pattern REGEX --action-pattern REGEX``.

Success rates say whether a policy wins, not whether it read its task. Some tasks turn on one
detail the policy must copy from the task text into a command, and a policy can also get it right
by recalling a preferred value. This tool reads the turn records ``sdgym eval`` writes (one JSON
object per turn: ``task_id``, ``rollout_seed``, ``traj_id``, ``turn``, the ``prompt`` text or
the ``messages``, the ``response``), and per episode takes

* the task's value: the first capture group of ``--task-pattern`` in the episode's first prompt;
* the named value: the first capture group of ``--action-pattern`` in the first action (the text
  inside ``<action>…</action>``) of the episode that matches it.

It prints how many episodes named a value, the share that named the task's value with its 95%
bootstrap interval (:func:`benchmarks.protocol.statistics.mean_interval` over the tasks, each
task's share averaged over its rollout seeds, so repeated tasks are not counted as independent),
the share a policy would get that names each value as often as this one does but independently
of the task (``sum over values v of P(named v) * P(task v)``), and how often each value was
named: a policy that recalls rather than copies names its values in one preferred order whatever
the task says. Actions are read as the env reads them (:func:`sdgym.wrappers.tagged_actions.
extract_tagged`: the first ``<action>`` block, any case).

Example: ScienceWorld's find tasks end with ``move it to the <colour> box``, so a start that
copies names the task's colour in its first ``move … box`` command::

    sdgym eval --env ScienceWorld-v0 --model scienceworld-easy-sft --split easy_test \\
        --episodes 200 --seeds 1 --temperature 0.4 --max-new-tokens 40 \\
        --env-kwarg simplifications=easy --env-kwarg max_episode_steps=12 --out turns.jsonl
    python -m benchmarks.protocol.copied_feature turns.jsonl \\
        --task-pattern "move it to the (\\w+) box" --action-pattern "move .* to (?:the )?(\\w+) box"
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.protocol.statistics import Interval, mean_interval
from sdgym.wrappers.tagged_actions import DEFAULT_TAGS, extract_tagged


@dataclass
class CopiedFeature:
    """How often the episodes' first matching action named their task's value."""

    episodes: int
    """Episodes read."""
    untagged: int
    """Episodes whose first prompt does not match the task pattern (left out)."""
    named: int
    """Episodes (with a task value) that sent an action matching the action pattern."""
    copied_count: int
    """Of those, the episodes whose first such action named the task's value."""
    copied: Interval
    """That share (mean over tasks of each task's share), with its 95% interval."""
    chance: float
    """The share expected if the same values were named independently of the task:
    ``sum_v P(named v) * P(task v)`` over those episodes."""
    named_values: Counter[str]
    """How often each value was named in those first actions."""
    task_values: Counter[str]
    """How often each value was the task's, over the same episodes."""


def prompt_text(turn: dict[str, Any]) -> str:
    """A turn record's prompt as text: ``prompt``, or its ``messages``' contents joined."""
    if isinstance(turn.get("prompt"), str):
        return turn["prompt"]
    return "\n".join(str(m.get("content", "")) for m in turn.get("messages") or [])


def first_group(pattern: re.Pattern[str], text: str) -> str | None:
    """The first capture group (the whole match without groups) of ``pattern`` in ``text``."""
    match = pattern.search(text)
    if match is None:
        return None
    return match[1 if pattern.groups else 0]


def episodes_of(turns: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Turn records grouped by episode (rollout seed, task, trajectory), each in turn order.

    Raises ValueError if one episode has a turn twice (two files of records concatenated)."""
    grouped: dict[tuple[Any, Any, Any], dict[int, dict[str, Any]]] = {}
    for turn in turns:
        key = (turn.get("rollout_seed"), turn.get("task_id"), turn.get("traj_id"))
        number = int(turn.get("turn", 0))
        episode = grouped.setdefault(key, {})
        if number in episode:
            raise ValueError(f"turn {number} of episode (rollout seed {key[0]}, task {key[1]}, "
                             f"trajectory {key[2]}) appears twice: give one eval's records")
        episode[number] = turn
    return [[episode[n] for n in sorted(episode)] for episode in grouped.values()]


def copied_feature(turns: Sequence[dict[str, Any]], task_pattern: str, action_pattern: str,
                   seed: int = 0) -> CopiedFeature:
    """The measure of the module docstring over the turn records ``turns``."""
    task_re, action_re = compile_pattern(task_pattern, "--task-pattern"), compile_pattern(
        action_pattern, "--action-pattern")
    episodes = episodes_of(turns)
    untagged = 0
    hits_by_task: dict[Any, list[float]] = {}
    named_values: Counter[str] = Counter()
    task_values: Counter[str] = Counter()
    for episode in episodes:
        task_value = first_group(task_re, prompt_text(episode[0]))
        if task_value is None:
            untagged += 1
            continue
        for turn in episode:
            _, action = extract_tagged(turn.get("response"), DEFAULT_TAGS)
            named = first_group(action_re, action) if action is not None else None
            if named is not None:
                hits_by_task.setdefault(turn.get("task_id"), []).append(float(named == task_value))
                named_values[named] += 1
                task_values[task_value] += 1
                break
    named = sum(named_values.values())
    copied_count = int(sum(sum(hits) for hits in hits_by_task.values()))
    if not named:
        return CopiedFeature(len(episodes), untagged, 0, 0, Interval(float("nan")),
                             float("nan"), named_values, task_values)
    task_shares = np.array([[float(np.mean(hits)) for hits in hits_by_task.values()]])
    chance = sum(named_values[v] * task_values[v] for v in task_values) / named**2
    return CopiedFeature(len(episodes), untagged, named, copied_count,
                         mean_interval(task_shares, seed), chance, named_values, task_values)


def compile_pattern(pattern: str, option: str) -> re.Pattern[str]:
    """``pattern`` compiled, or a ValueError naming ``option``."""
    try:
        return re.compile(pattern)
    except re.error as error:
        raise ValueError(f"{option} {pattern!r} is not a regular expression: {error}") from None


def read_turns(path: str | Path) -> list[dict[str, Any]]:
    """The turn records of an ``sdgym eval`` trajectories file (one JSON object per line)."""
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    turns = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            turn = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number} is not a JSON object ({error.msg})") from None
        if not isinstance(turn, dict) or "response" not in turn:
            raise ValueError(f"{path}:{number} is not an sdgym eval turn record "
                             "(no 'response' field)")
        turns.append(turn)
    if not turns:
        raise ValueError(f"{path} has no turn records")
    return turns


def by_count(counts: Counter[str]) -> str:
    """``"red 54, yellow 44, ..."``: values by decreasing count."""
    return ", ".join(f"{value} {count}" for value, count in counts.most_common())


def summary(result: CopiedFeature) -> str:
    """The result as the lines the command prints."""
    lines = [f"episodes: {result.episodes} ({result.untagged} without a task value); "
             f"{result.named} sent an action naming a value"]
    if result.named:
        lines += [f"first such action names the task's value: {result.copied_count}/"
                  f"{result.named}; share over tasks {result.copied.fmt()} (naming the same "
                  f"values independently of the task: {result.chance:.3f})",
                  f"values named: {by_count(result.named_values)}",
                  f"task values: {by_count(result.task_values)}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.protocol.copied_feature",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("trajectories", help="turn records written by sdgym eval (--out)")
    parser.add_argument("--task-pattern", required=True,
                        help="regular expression searched in each episode's first prompt; its "
                             "first group is the task's value")
    parser.add_argument("--action-pattern", required=True,
                        help="regular expression searched in each action; its first group is "
                             "the value the action names")
    args = parser.parse_args(argv)
    try:
        result = copied_feature(read_turns(args.trajectories), args.task_pattern,
                                args.action_pattern)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(summary(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
