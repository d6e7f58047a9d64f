"""Test success split by a feature of each task: ``python -m benchmarks.protocol.success_by_feature
RUN_DIR --pattern REGEX``.

A report gives one success rate per method and env. When a method fails, the next question is
*where*: which kind of task. This tool reads the finished cells of a benchmark run folder, resets
the env once on every task of their test panel (same split and task index, privileged info not
needed), takes the first capture group of ``REGEX`` in the task's first observation as the
task's feature (``(no match)`` where it does not match), and prints, per method and feature
value, the number of tasks and the test success with its 95% stratified-bootstrap interval over
training seeds × tasks (:func:`benchmarks.protocol.statistics.mean_interval`). With
``--versus METHOD`` each row also gets the paired difference to that method on the same tasks
and seeds (e.g. ``--versus sft-start``: what training changed, per feature).

Example: ScienceWorld's find tasks end with ``move it to the <colour> box``; success by target
colour shows whether the agent copies the colour from the task line::

    python -m benchmarks.protocol.success_by_feature results/2026-12-06/cpu-scienceworld-24-steps \\
        --pattern "move it to the (\\w+) box" --versus sft-start
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.protocol.run_folders import RunFolderError, read_run_folder
from benchmarks.protocol.statistics import (
    Interval,
    ScoreMatrix,
    mean_interval,
    paired,
    paired_difference,
    score_matrix,
)

NO_MATCH = "(no match)"


@dataclass
class FeatureRow:
    """One method's test success on the tasks that share one feature value."""

    env: str
    method: str
    feature: str
    tasks: int
    seeds: int
    success: Interval
    versus: Interval | None = None


def task_features(observations: dict[int, str], pattern: str) -> dict[int, str]:
    """Each task's feature: the first capture group of ``pattern`` (the whole match where it has
    no group) in its first observation, or :data:`NO_MATCH`."""
    compiled = re.compile(pattern)
    group = 1 if compiled.groups else 0
    matches = {task: compiled.search(observation) for task, observation in observations.items()}
    return {task: NO_MATCH if match is None else match[group] for task, match in matches.items()}


def first_observations(env_id: str, split: str, tasks: Iterable[int],
                       env_kwargs: dict[str, Any] | None = None) -> dict[int, str]:
    """The first observation of each task index of ``split`` (one env, reset once per task)."""
    import gymnasium as gym

    import sdgym  # noqa: F401  (registers the ids)

    env = gym.make(env_id, **(env_kwargs or {}))
    try:
        return {task: str(env.reset(options={"split": split, "task_index": task})[0])
                for task in tasks}
    finally:
        env.close()


def feature_rows(records: Sequence[dict[str, Any]], features: dict[int, str],
                 versus: str | None = None, seed: int = 0) -> list[FeatureRow]:
    """Per (env, method) of ``records`` and feature value, success over the tasks with that
    value, and with ``versus`` the paired difference to that method's records."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record.get("outcomes"):
            grouped[(str(record["env_id"]), str(record["method"]))].append(record)
    matrices = {key: score_matrix(group) for key, group in sorted(grouped.items())}
    rows = []
    for (env, method), matrix in matrices.items():
        baseline = matrices.get((env, versus)) if versus and versus != method else None
        if matrix is None:
            continue
        for value in sorted({features.get(t, NO_MATCH) for t in matrix.tasks}):
            columns = [i for i, t in enumerate(matrix.tasks) if features.get(t, NO_MATCH) == value]
            cut = _restrict(matrix, columns)
            row = FeatureRow(env, method, value, len(columns), len(matrix.seeds),
                             mean_interval(cut.values, seed))
            if baseline is not None:
                pair = paired(cut, baseline)
                if pair is not None:
                    row.versus = paired_difference(pair[0], pair[1], seed)
            rows.append(row)
    return rows


def _restrict(matrix: ScoreMatrix, columns: list[int]) -> ScoreMatrix:
    """``matrix`` cut to its task columns ``columns``."""
    return ScoreMatrix(matrix.seeds, [matrix.tasks[i] for i in columns],
                       matrix.values[:, columns], matrix.rollout_seeds)


def markdown_table(rows: Sequence[FeatureRow], versus: str | None = None) -> str:
    """The rows as one markdown table."""
    header = "| env | method | feature | tasks | seeds | success [95% CI] |"
    rule = "|---|---|---|---|---|---|"
    if versus:
        header += f" − {versus} [95% CI] |"
        rule += "---|"
    lines = [header, rule]
    for row in rows:
        line = (f"| {row.env} | {row.method} | {row.feature} | {row.tasks} | {row.seeds} | "
                f"{row.success.fmt()} |")
        if versus:
            line += f" {row.versus.fmt(signed=True) if row.versus else '–'} |"
        lines.append(line)
    return "\n".join(lines)


ObservationReader = Callable[[str, str, Iterable[int], dict[str, Any]], dict[int, str]]


def success_by_feature(run_dir: str, pattern: str, versus: str | None = None,
                       env_kwargs: dict[str, Any] | None = None,
                       read_observations: ObservationReader = first_observations) -> str:
    """The markdown table for the finished cells of ``run_dir`` (see the module docstring)."""
    try:
        re.compile(pattern)
    except re.error as error:
        raise ValueError(f"--pattern {pattern!r} is not a regular expression: {error}") from None
    run = read_run_folder(run_dir)
    records = [cell.record for cell in run.cells if cell.record is not None
               and cell.record.get("outcomes")]
    if not records:
        raise ValueError(f"{run_dir} has no finished cell with test outcomes yet")
    methods = sorted({str(record["method"]) for record in records})
    if versus is not None and versus not in methods:
        raise ValueError(f"--versus {versus!r}: {run_dir} has no finished cell of that method; "
                         f"it has {methods}")
    panels: dict[tuple[str, str], set[int]] = defaultdict(set)
    for record in records:
        panels[(str(record["env_id"]), str(record.get("split", "test")))].update(
            int(o["task_index"]) for o in record["outcomes"])
    if len({env for env, _ in panels}) != len(panels):
        raise ValueError(f"{run_dir}: one env was tested on several splits; give one run per "
                         "split")
    rows: list[FeatureRow] = []
    for (env, split), tasks in sorted(panels.items()):
        observations = read_observations(env, split, sorted(tasks), dict(env_kwargs or {}))
        features = task_features(observations, pattern)
        rows += feature_rows([r for r in records if r["env_id"] == env], features, versus)
    return markdown_table(rows, versus)


def main(argv: list[str] | None = None) -> int:
    from sdgym.cli import parse_env_kwargs

    parser = argparse.ArgumentParser(prog="python -m benchmarks.protocol.success_by_feature",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="benchmark run folder (sdgym benchmark --out, or an archive)")
    parser.add_argument("--pattern", required=True,
                        help="regular expression searched in each task's first observation; "
                             "its first group (or the whole match) is the task's feature")
    parser.add_argument("--versus", default=None, metavar="METHOD",
                        help="also give each row's paired difference to METHOD (e.g. sft-start)")
    parser.add_argument("--env-kwarg", action="append", default=[], metavar="KEY=VALUE",
                        help="keyword argument of the env used to read first observations")
    args = parser.parse_args(argv)
    try:
        table = success_by_feature(args.run, args.pattern, args.versus,
                                   parse_env_kwargs(args.env_kwarg))
    except (ValueError, RunFolderError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
