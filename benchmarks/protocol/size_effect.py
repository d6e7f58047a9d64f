"""Does a method's standing against GRPO change with the model size? (the scale axis of a report)

For an env trained at two or more model sizes, each method's advantage over GRPO at a size is
``Δ_size = method − GRPO``, paired on the same training seeds and test tasks (the report's paired
difference, the same numbers as the setting's own table). Two sizes share the test panel and
rollout seeds but not their training runs, so the change of that advantage, ``Δ_larger −
Δ_smaller``, is a difference of two independent samples on the same tasks: its 95% interval
comes from a two-sample stratified bootstrap (tasks resampled once for both sizes; each size's
training seeds resampled on their own within each task, keeping each seed's method and GRPO runs
together). "The ranking changes with size" is then a claim with an interval: a method whose
advantage changes by an amount whose interval excludes 0. The rank correlation of the methods'
mean advantages (Kendall's τ, no interval) says how much of the order holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.protocol.merge import size_order
from benchmarks.protocol.statistics import (
    REPS,
    Interval,
    ScoreMatrix,
    mean_interval,
    paired,
    percentile_interval,
    two_sample_draws,
)


@dataclass
class SizeChange:
    """One method on one env, between two model sizes."""

    env_id: str
    method: str
    smaller: str
    larger: str
    delta_smaller: Interval
    delta_larger: Interval
    change: Interval
    seeds: int
    """Training seeds of the size with fewer."""
    tasks: int


def _advantage(rows: dict[str, dict[str, Any]], method: str) -> tuple[np.ndarray, list[int]] | None:
    """``method − grpo`` per (shared training seed, task) and the tasks, or None without both."""
    mine, grpo = rows.get(method, {}).get("matrix"), rows.get("grpo", {}).get("matrix")
    if not isinstance(mine, ScoreMatrix) or not isinstance(grpo, ScoreMatrix):
        return None
    pair = paired(mine, grpo)
    if pair is None:
        return None
    tasks = [t for t in mine.tasks if t in grpo.tasks]
    return pair[0] - pair[1], tasks


def change_interval(smaller: np.ndarray, larger: np.ndarray, seed: int = 0,
                    reps: int = REPS) -> Interval:
    """Mean of ``larger`` minus mean of ``smaller`` (each ``[its training seeds, the same tasks]``)
    with a 95% two-sample stratified-bootstrap interval: tasks resampled once for both, each
    sample's runs resampled on their own within each task."""
    small, large = two_sample_draws(smaller, larger, seed, reps)
    return percentile_interval(larger.mean() - smaller.mean(),
                               large.mean(axis=(1, 2)) - small.mean(axis=(1, 2)))


def size_changes(table: dict[str, dict[str, dict[str, Any]]], seed: int = 0) -> list[SizeChange]:
    """Every (env, trained method ≠ grpo, smaller size, larger size) where both sizes trained
    the method and GRPO on shared tasks. ``table``: the report's ``summarise`` output."""
    by_env: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for rows in table.values():
        first = next(iter(rows.values()))
        by_env.setdefault(first["env_id"], {})[first["size"]] = rows
    out = []
    for env_id, sizes in sorted(by_env.items()):
        order = sorted(sizes, key=size_order)
        for i, smaller in enumerate(order):
            for larger in order[i + 1:]:
                methods = sorted(m for m, r in sizes[smaller].items()
                                 if r["kind"] == "train" and m != "grpo" and m in sizes[larger])
                for method in methods:
                    a, b = _advantage(sizes[smaller], method), _advantage(sizes[larger], method)
                    if a is None or b is None:
                        continue
                    tasks = [t for t in a[1] if t in b[1]]
                    if not tasks:
                        continue
                    small = a[0][:, [a[1].index(t) for t in tasks]]
                    large = b[0][:, [b[1].index(t) for t in tasks]]
                    out.append(SizeChange(
                        env_id, method, smaller, larger,
                        mean_interval(a[0], seed), mean_interval(b[0], seed),
                        change_interval(small, large, seed), min(len(a[0]), len(b[0])),
                        len(tasks)))
    return out


def kendall_tau(changes: list[SizeChange]) -> dict[tuple[str, str, str], float]:
    """Kendall's τ between the methods' mean advantages at the two sizes, per (env, smaller,
    larger); 1 = the same order, −1 = reversed."""
    from scipy.stats import kendalltau

    groups: dict[tuple[str, str, str], list[SizeChange]] = {}
    for change in changes:
        groups.setdefault((change.env_id, change.smaller, change.larger), []).append(change)
    taus = {key: float(kendalltau([c.delta_smaller.point for c in group],
                                  [c.delta_larger.point for c in group]).statistic)
            for key, group in groups.items() if len(group) > 1}
    return {key: tau for key, tau in taus.items() if np.isfinite(tau)}  # all tied: no order


def size_lines(table: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """The report section "Across model sizes": a headline sentence and the table under it
    (empty when no env ran at two sizes)."""
    changes = size_changes(table)
    if not changes:
        return []
    taus = kendall_tau(changes)
    moved = [c for c in changes if c.change.excludes_zero()]
    flipped = [c for c in changes if c.delta_smaller.excludes_zero() * c.delta_larger.excludes_zero() < 0]
    pairs = sorted({(c.env_id.split("/")[-1], c.smaller, c.larger) for c in changes})
    seeds = sorted({c.seeds for c in changes})
    tasks = sorted({c.tasks for c in changes})
    lines = ["## Across model sizes", "",
             f"Does a method's standing against GRPO change with the model size? Over "
             f"{len(changes)} method × size-pair comparisons ("
             + "; ".join(f"{env} {small} → {large}" for env, small, large in pairs)
             + f"; {'/'.join(map(str, seeds))} training seeds × {'/'.join(map(str, tasks))} test "
             f"tasks each): the advantage over GRPO changes by an amount whose 95% interval "
             f"excludes 0 for {len(moved)}"
             + (" (" + ", ".join(f"{c.method} {c.env_id.split('/')[-1]} {c.change.fmt(3, True)}"
                                 for c in moved) + ")" if moved else "")
             + f"; with {len(changes)} comparisons at 95%, about {0.05 * len(changes):.1f} would do so "
             f"by chance alone. A method that beats GRPO at one size and is worse at another: "
             + (", ".join(f"{c.method} ({c.env_id.split('/')[-1]})" for c in flipped)
                if flipped else "none") + ". Rank agreement of the methods' mean Δ (Kendall's τ): "
             + "; ".join(f"{env.split('/')[-1]} {small} → {large} {tau:+.2f}"
                         for (env, small, large), tau in sorted(taus.items())) + ".", "",
             "| env | method | sizes | Δ vs GRPO (smaller) | Δ vs GRPO (larger) | change [95% CI] |",
             "|---|---|---|---|---|---|"]
    for c in changes:
        mark = " **changed**" if c.change.excludes_zero() else ""
        lines.append(f"| {c.env_id.split('/')[-1]} | {c.method} | {c.smaller} → {c.larger} | "
                     f"{c.delta_smaller.fmt(3, True)} | {c.delta_larger.fmt(3, True)} | "
                     f"{c.change.fmt(3, True)}{mark} |")
    return lines + ["", "Δ: the method's paired difference to GRPO at that size (same seeds and "
                    "tasks); change: Δ(larger) − Δ(smaller) on the same test tasks, its interval from a "
                    "two-sample bootstrap (the sizes' training runs are independent).", ""]


__all__ = ["SizeChange", "kendall_tau", "size_changes", "size_lines"]
