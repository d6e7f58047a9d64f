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
bootstrap interval over those episodes (:func:`benchmarks.protocol.statistics.mean_interval`),
the share a policy that ignores the task would get (``1/k`` for ``k`` task values seen), and how
often each value was named: a policy that recalls rather than copies names its values in one
preferred order whatever the task says.

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

ACTION = re.compile(r"<action>(.*?)</action>", re.DOTALL)


@dataclass
class CopiedFeature:
    """How often the episodes' first matching action named their task's value."""

    episodes: int
    """Episodes read."""
    untagged: int
    """Episodes whose first prompt does not match the task pattern (left out)."""
    named: int
    """Episodes (with a task value) that sent an action matching the action pattern."""
    copied: Interval
    """Share of those whose first such action named the task's value, with its 95% interval."""
    chance: float
    """``1/k`` for the ``k`` distinct task values seen: what ignoring the task gets on average."""
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
    """Turn records grouped by episode (rollout seed, task, trajectory), each in turn order."""
    grouped: dict[tuple[Any, Any, Any], list[dict[str, Any]]] = {}
    for turn in turns:
        key = (turn.get("rollout_seed"), turn.get("task_id"), turn.get("traj_id"))
        grouped.setdefault(key, []).append(turn)
    return [sorted(episode, key=lambda t: int(t.get("turn", 0))) for episode in grouped.values()]


def copied_feature(turns: Sequence[dict[str, Any]], task_pattern: str, action_pattern: str,
                   seed: int = 0) -> CopiedFeature:
    """The measure of the module docstring over the turn records ``turns``."""
    task_re, action_re = compile_pattern(task_pattern, "--task-pattern"), compile_pattern(
        action_pattern, "--action-pattern")
    episodes = episodes_of(turns)
    untagged = 0
    hits: list[float] = []
    named_values: Counter[str] = Counter()
    task_values: Counter[str] = Counter()
    for episode in episodes:
        task_value = first_group(task_re, prompt_text(episode[0]))
        if task_value is None:
            untagged += 1
            continue
        for turn in episode:
            action = ACTION.search(str(turn.get("response", "")))
            named = first_group(action_re, action[1]) if action else None
            if named is not None:
                hits.append(float(named == task_value))
                named_values[named] += 1
                task_values[task_value] += 1
                break
    copied = mean_interval(np.array([hits]), seed) if hits else Interval(float("nan"))
    chance = 1.0 / len(task_values) if task_values else float("nan")
    return CopiedFeature(len(episodes), untagged, len(hits), copied, chance, named_values,
                         task_values)


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


def summary(result: CopiedFeature) -> str:
    """The result as the lines the command prints."""
    by_count = lambda counts: ", ".join(f"{v} {n}" for v, n in counts.most_common())  # noqa: E731
    lines = [f"episodes: {result.episodes} ({result.untagged} without a task value); "
             f"{result.named} sent an action naming a value"]
    if result.named:
        lines += [f"first such action names the task's value: "
                  f"{round(result.copied.point * result.named)}/{result.named} = "
                  f"{result.copied.fmt()} (ignoring the task: {result.chance:.3f})",
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
