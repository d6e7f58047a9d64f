"""The report's figures, each drawn from data a function here computes (tested without pixels).

- ``curves-<env>.png``: validation success per training step, one line per method (mean over
  training seeds, band min–max), every method its own colour *and* marker/linestyle
  (:func:`method_styles`), the legend outside the axes.
- ``profile-<env>.png``: performance profiles, styled the same way.
- ``cost-vs-delta.png``: the paper's Figure 3: per setting a small panel of training-cost ratio to
  GRPO (x) against the paired difference to GRPO with its 95% interval (y), so labels of one
  setting never pile onto another's (:func:`cost_delta_points`).
- ``stability.png``: per setting, each method's largest validation drop and AUC spread over
  training seeds (:func:`stability_points`).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.protocol.statistics import Comparison
from sdgym.cache import atomic_write_bytes

Table = dict[str, dict[str, dict[str, Any]]]

_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_LINESTYLES = ("-", "--", ":", "-.")


def method_styles(methods: list[str]) -> dict[str, dict[str, str]]:
    """A distinct ``{color, marker, linestyle}`` per method, stable for a given sorted list: GRPO
    first in black, the others walk colours, markers and linestyles together: up to 13 methods
    have 13 different colours, and no two of up to 48 share all three."""
    ordered = sorted(methods, key=lambda m: (m != "grpo", m))
    styles = {}
    for index, method in enumerate(ordered):
        if method == "grpo":
            styles[method] = {"color": "black", "marker": "o", "linestyle": "-"}
            continue
        styles[method] = {"color": _COLOURS[index % len(_COLOURS)],
                          "marker": _MARKERS[index % len(_MARKERS)],
                          "linestyle": _LINESTYLES[(index // len(_COLOURS)) % len(_LINESTYLES)]}
    return styles


def cost_delta_points(table: Table, compared: list[Comparison]
                      ) -> dict[str, list[tuple[str, float, float, float, float]]]:
    """``{env: [(method, cost ratio, Δ, Δ low, Δ high)]}`` for every compared method with a cost
    ratio (the points of ``cost-vs-delta.png``)."""
    out: dict[str, list[tuple[str, float, float, float, float]]] = {}
    for c in compared:
        ratio = table[c.env_id][c.method].get("cost_ratio")
        if ratio is None:
            continue
        d = c.difference
        out.setdefault(c.env_id, []).append(
            (c.method, ratio, d.point, d.point if d.low is None else d.low,
             d.point if d.high is None else d.high))
    return {env: sorted(points) for env, points in sorted(out.items())}


def stability_points(table: Table) -> dict[str, list[tuple[str, float, float | None]]]:
    """``{env: [(method, largest drop, AUC spread)]}`` of the trained rows."""
    return {env: sorted((m, r["largest_drop"], r.get("auc_spread")) for m, r in rows.items()
                        if r["kind"] == "train" and r["largest_drop"] is not None)
            for env, rows in sorted(table.items())
            if any(r["kind"] == "train" and r["largest_drop"] is not None for r in rows.values())}


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _save(figure: Any, path: Path, plt: Any) -> Path:
    image = io.BytesIO()
    figure.savefig(image, dpi=100, format="png", bbox_inches="tight")
    plt.close(figure)
    atomic_write_bytes(path, image.getvalue())  # a full disk keeps the last figure whole
    return path


def _legend_outside(axis: Any) -> None:
    axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def draw_figures(table: Table, compared: list[Comparison], out: Path) -> list[Path]:
    """Draw every figure the report links; return their paths (none without matplotlib)."""
    plt = _pyplot()
    if plt is None:
        return []
    styles = method_styles(sorted({m for rows in table.values() for m in rows}))
    paths = []
    for env_id, rows in sorted(table.items()):
        name = env_id.split("/")[-1]
        curves = {m: r["curve"] for m, r in rows.items() if r["curve"]}
        if curves:
            figure, axis = plt.subplots(figsize=(7, 4))
            for method, curve in sorted(curves.items()):
                steps = [c[0] for c in curve]
                axis.plot(steps, [c[1] for c in curve], label=method, markersize=4,
                          **styles[method])
                axis.fill_between(steps, [c[2] for c in curve], [c[3] for c in curve],
                                  alpha=0.08, color=styles[method]["color"])
            axis.set(xlabel="training step", ylabel="validation success",
                     title=f"{env_id} (band: min–max over training seeds)")
            _legend_outside(axis)
            paths.append(_save(figure, out / f"curves-{name}.png", plt))
        profiles = {m: r["matrix"] for m, r in rows.items() if r["matrix"] is not None}
        if profiles:
            figure, axis = plt.subplots(figsize=(7, 4))
            thresholds = np.linspace(0, 1, 51)
            for method, matrix in sorted(profiles.items()):
                style = {**styles[method], "marker": None}
                axis.plot(thresholds, [(matrix.values >= t).mean() for t in thresholds],
                          label=method, **style)
            axis.set(xlabel="success over rollout seeds ≥ τ", ylabel="fraction of (seed, task)",
                     title=f"performance profile — {env_id}")
            _legend_outside(axis)
            paths.append(_save(figure, out / f"profile-{name}.png", plt))
    paths += _small_multiples(cost_delta_points(table, compared), styles, out, plt)
    paths += _stability(stability_points(table), styles, out, plt)
    return paths


def _small_multiples(points: dict[str, list[tuple[str, float, float, float, float]]],
                     styles: dict[str, dict[str, str]], out: Path, plt: Any) -> list[Path]:
    if not points:
        return []
    figure, axes = plt.subplots(1, len(points), figsize=(4 * len(points) + 1.5, 3.6),
                                squeeze=False, sharey=True)
    for axis, (env_id, rows) in zip(axes[0], points.items(), strict=True):
        for method, ratio, delta, low, high in rows:
            axis.errorbar(ratio, delta, yerr=[[delta - low], [high - delta]], capsize=2,
                          color=styles[method]["color"], marker=styles[method]["marker"],
                          linestyle="none", label=method)
        axis.axhline(0, color="black", linewidth=0.8)
        axis.axvline(1, color="grey", linewidth=0.6, linestyle=":")
        axis.set(title=env_id.split("/")[-1], xlabel="training cost ÷ GRPO's")
    axes[0][0].set_ylabel("Δ success vs GRPO (paired 95% CI)")
    _legend_outside(axes[0][-1])
    return [_save(figure, out / "cost-vs-delta.png", plt)]


def _stability(points: dict[str, list[tuple[str, float, float | None]]],
               styles: dict[str, dict[str, str]], out: Path, plt: Any) -> list[Path]:
    if not points:
        return []
    figure, axes = plt.subplots(1, len(points), figsize=(4 * len(points) + 1.5, 3.6),
                                squeeze=False, sharey=True)
    for axis, (env_id, rows) in zip(axes[0], points.items(), strict=True):
        for method, drop, spread in rows:
            axis.scatter(drop, spread if spread is not None else 0.0, label=method,
                         color=styles[method]["color"], marker=styles[method]["marker"])
        axis.axvline(0.25, color="grey", linewidth=0.6, linestyle=":")
        axis.set(title=env_id.split("/")[-1], xlabel="largest validation drop")
    axes[0][0].set_ylabel("AUC spread over training seeds")
    _legend_outside(axes[0][-1])
    return [_save(figure, out / "stability.png", plt)]
