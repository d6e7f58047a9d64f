"""The premise table: teacher (student + context) against the student alone, at step 0.

Input: a ``premise`` record per env (:func:`baselines.premise.measure_premise`, run by the
benchmark as its ``premise`` cell), which keeps every (task, rollout seed) outcome of the
student and of the teacher with each context kind on the validation panel, with the same
sampling seeds. Per context, on the tasks it covers, the score matrices ``[rollout seeds, tasks]``
of teacher and student give the teacher's and the student's success and the **paired difference**
teacher − student, each with a 95% stratified-bootstrap interval (rliable, tasks resampled:
:func:`benchmarks.protocol.statistics.mean_interval`). The premise is **met** when that
interval's lower end is above 0; where it is not, every head reading that context is marked
"premise not met" in the report.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.protocol.statistics import Interval, mean_interval, paired_difference

PREMISE_KIND = "premise"
"""``kind`` (and ``method``) of a premise record."""


@dataclass
class PremiseRow:
    """One context kind on one env: the teacher with it against the student."""

    context: str
    heads: list[str]
    tasks: int
    panel_tasks: int
    rollouts: int
    student: Interval | None
    teacher: Interval | None
    difference: Interval | None

    @property
    def met(self) -> bool:
        """The teacher is better than the student: the paired interval is above 0."""
        return self.difference is not None and self.difference.excludes_zero() == 1


def context_heads(methods: Iterable[str]) -> dict[str, list[str]]:
    """Context kind → the methods (of ``methods``) whose teacher reads it (the head registry)."""
    from baselines.heads import available_heads, make_head

    known = set(available_heads())
    heads: dict[str, list[str]] = defaultdict(list)
    for method in methods:
        if method not in known:  # grpo's no-teacher rows are registered; others are not heads
            continue
        head = make_head(method)
        if head.needs_teacher:
            heads[head.context].append(method)
    return dict(heads)


def _matrix(outcomes: Sequence[dict[str, Any]], tasks: Sequence[int], seeds: Sequence[int]
            ) -> np.ndarray | None:
    cells = {(int(o["rollout_seed"]), int(o["task_index"])): float(o["success"]) for o in outcomes}
    if any((s, t) not in cells for s in seeds for t in tasks):
        return None
    return np.array([[cells[(s, t)] for t in tasks] for s in seeds], dtype=float)


def premise_rows(record: dict[str, Any], methods: Iterable[str] = ()) -> list[PremiseRow]:
    """The rows of one premise record (one per context kind measured)."""
    heads = context_heads(methods)
    seeds = [int(s) for s in record.get("rollout_seeds", [])]
    student_outcomes = record.get("student", {}).get("outcomes", [])
    panel = [int(t) for t in record.get("tasks", [])]
    rows = []
    for context, entry in record.get("contexts", {}).items():
        covered = [int(t) for t in entry.get("covered_tasks", [])]
        student = _matrix(student_outcomes, covered, seeds) if covered else None
        teacher = _matrix(entry.get("outcomes", []), covered, seeds) if covered else None
        pair = student is not None and teacher is not None
        rows.append(PremiseRow(
            context, heads.get(context, []), len(covered), len(panel), len(seeds),
            mean_interval(student) if pair else None, mean_interval(teacher) if pair else None,
            paired_difference(teacher, student) if pair else None))
    return rows


def unmet_heads(records: Iterable[dict[str, Any]], methods: Iterable[str]) -> set[tuple[str, str]]:
    """``(env_id, method)`` of every head whose context's premise was measured on that env and
    is not met (a context no task had, e.g. ``sibling`` without a success, is "not measured")."""
    methods = list(methods)
    unmet = set()
    for record in records:
        if record.get("kind") != PREMISE_KIND:
            continue
        for row in premise_rows(record, methods):
            if row.difference is not None and not row.met:  # unmeasured: the table says so
                unmet.update((record["env_id"], head) for head in row.heads)
    return unmet


def _fmt(value: Interval | None, signed: bool = False) -> str:
    return value.fmt(3, signed) if value is not None else "–"


def premise_table_lines(record: dict[str, Any], methods: Iterable[str]) -> list[str]:
    """Markdown: the premise table of one env."""
    rows = premise_rows(record, methods)
    lines = [f"Teacher premise at step 0 (the warm start; split `{record.get('split')}`, "
             f"{len(record.get('tasks', []))} tasks × {len(record.get('rollout_seeds', []))} "
             "rollout seeds; teacher and student on the same tasks and sampling seeds):", "",
             "| context | heads | tasks covered | student [95% CI] | teacher [95% CI] | "
             "teacher − student [95% CI] | premise |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        verdict = "met" if row.met else ("not measured" if row.difference is None
                                         else "**not met**")
        lines.append(f"| {row.context} | {', '.join(row.heads) or '–'} | "
                     f"{row.tasks} of {row.panel_tasks} | {_fmt(row.student)} | "
                     f"{_fmt(row.teacher)} | {_fmt(row.difference, signed=True)} | {verdict} |")
    return lines + [""]


def _triple(value: Interval | None) -> list[float | None] | None:
    return None if value is None else [value.point, value.low, value.high]


def warm_start_measurement(record: dict[str, Any], date: str, commit: str, command: str
                           ) -> dict[str, Any]:
    """A premise record as a warm start's ``measured`` entry
    (:func:`agents.warm_starts.model_card.add_measurement`): the student over the whole panel and
    each context's teacher, difference and verdict, with 95% intervals."""
    seeds = [int(s) for s in record.get("rollout_seeds", [])]
    panel = [int(t) for t in record.get("tasks", [])]
    student = _matrix(record.get("student", {}).get("outcomes", []), panel, seeds)
    teachers = {}
    for row in premise_rows(record):
        verdict = "met" if row.met else ("not measured" if row.difference is None else "not met")
        teachers[row.context] = {"tasks_covered": f"{row.tasks} of {row.panel_tasks}",
                                 "teacher": _triple(row.teacher),
                                 "difference": _triple(row.difference), "premise": verdict}
    return {"date": date, "commit": commit, "command": command, "split": record.get("split"),
            "tasks": len(panel), "rollout_seeds": len(seeds),
            "student": _triple(mean_interval(student)) if student is not None else None,
            "teachers": teachers}
