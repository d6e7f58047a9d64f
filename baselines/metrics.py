"""Evaluation-protocol numbers: validation AUC and stability figures (DESIGN.md §4)."""

from __future__ import annotations

from collections.abc import Sequence


def validation_auc(steps: Sequence[float], values: Sequence[float], horizon: float | None = None) -> float:
    """Trapezoid area under ``(step, value)`` divided by the step horizon (last step by default)."""
    if len(steps) != len(values):
        raise ValueError("steps and values must have the same length")
    if len(steps) < 2:
        return float(values[0]) if values else 0.0
    pairs = sorted(zip(steps, values))
    area = sum((b[0] - a[0]) * (a[1] + b[1]) / 2 for a, b in zip(pairs, pairs[1:]))
    span = horizon if horizon is not None else pairs[-1][0] - pairs[0][0]
    return area / span if span > 0 else float(pairs[-1][1])


def largest_drop(values: Sequence[float]) -> float:
    """Largest decrease between consecutive validation points (0 when it never drops)."""
    return max((a - b for a, b in zip(values, values[1:])), default=0.0) if values else 0.0


def steps_below_half_best(steps: Sequence[float], values: Sequence[float]) -> float:
    """Steps spent (interval-weighted) below half of the running best, after the best was > 0."""
    spent, best = 0.0, 0.0
    for (s0, v0), (s1, _) in zip(zip(steps, values), list(zip(steps, values))[1:]):
        best = max(best, v0)
        if best > 0 and v0 < best / 2:
            spent += s1 - s0
    return spent
