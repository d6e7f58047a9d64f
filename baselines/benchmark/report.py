"""The benchmark report: per-env tables, the reality-check framing, plots, and what is missing.

``report.md`` holds, per env, one table row per method × model: final success mean ± std over the
rollout seeds (privileged info hidden), validation AUC, the stability figures (largest drop,
steps below half the running best), training seconds and the time ratio to GRPO. Then the
framing of "More Methods, Better Agents?": how many methods beat GRPO, in how many settings, at
what extra cost. Plots: validation curves per env, final performance vs training time.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from baselines.metrics import largest_drop, steps_below_half_best


def _mean_over_seeds(records: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in records if r.get(key) is not None]
    return statistics.fmean(values) if values else None


def summarise(records: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{env: {method: row}}`` with seeds pooled (each seed's per-rollout-seed successes)."""
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        cells[(record["env_id"], record["method"])].append(record)
    table: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for (env_id, method), group in cells.items():
        successes = [s for r in group for s in r.get("success_per_seed", [])]
        curve = group[0].get("validation") or []
        values = [v for _, v in curve]
        table[env_id][method] = {
            "kind": group[0]["kind"],
            "model": group[0].get("model_name", "tiny" if group[0]["kind"] != "baseline" else "-"),
            "final_mean": statistics.fmean(successes) if successes else 0.0,
            "final_std": statistics.pstdev(successes) if len(successes) > 1 else 0.0,
            "auc": _mean_over_seeds(group, "auc") if curve else None,  # a start row has no curve
            "largest_drop": largest_drop(values) if values else None,
            "below_half_best": steps_below_half_best([s for s, _ in curve], values) if values else None,
            "train_seconds": _mean_over_seeds(group, "train_seconds") or 0.0,
            "curve": curve,
            "seeds": len(group),
        }
    for rows in table.values():
        base = rows.get("grpo", {}).get("train_seconds")
        for row in rows.values():
            row["time_ratio"] = row["train_seconds"] / base if base and row["kind"] == "train" else None
    return table


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def framing(table: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Sentences in the paper's framing: methods beating GRPO, settings, extra cost."""
    lines = []
    beats: dict[str, int] = defaultdict(int)
    settings = 0
    for rows in table.values():
        grpo = rows.get("grpo")
        if grpo is None:
            continue
        settings += 1
        for method, row in rows.items():
            if row["kind"] == "train" and method != "grpo" and row["final_mean"] > grpo["final_mean"]:
                beats[method] += 1
    heads = sorted({m for rows in table.values() for m, r in rows.items()
                    if r["kind"] == "train" and m != "grpo"})
    if not heads or not settings:
        return lines  # a baseline-only run: nothing to compare with GRPO
    winners = [m for m in heads if beats[m]]
    lines.append(f"{len(winners)} of {len(heads)} self-distillation methods beat GRPO's final "
                 f"success in at least one of {settings} setting(s)"
                 + (f": {', '.join(f'{m} ({beats[m]}/{settings})' for m in winners)}." if winners else "."))
    ratios = [r["time_ratio"] for rows in table.values() for m, r in rows.items()
              if r.get("time_ratio") and m != "grpo"]
    if ratios:
        lines.append(f"Their training time is {min(ratios):.2f}×–{max(ratios):.2f}× GRPO's "
                     f"(median {statistics.median(ratios):.2f}×), teacher forward passes included.")
    return lines


def write_report(result: dict[str, Any], out: str | Path, title: str) -> Path:
    """Write ``report.md`` and the plots into ``out``; return the report path."""
    out = Path(out)
    table = summarise(result["records"])
    lines = [f"# {title}", ""]
    lines += framing(table) + [""]
    for env_id in sorted(table):
        rows = table[env_id]
        lines += [f"## {env_id}", "",
                  "| method | kind | model | final success (mean ± std) | AUC | largest drop | "
                  "steps below ½ best | train s | time ratio vs GRPO |",
                  "|---|---|---|---|---|---|---|---|---|"]
        order = sorted(rows, key=lambda m: ({"baseline": 0, "start": 1, "train": 2}[rows[m]["kind"]],
                                            m != "grpo", m))
        for method in order:
            row = rows[method]
            lines.append(
                f"| {method} | {row['kind']} | {row['model']} | {row['final_mean']:.3f} ± "
                f"{row['final_std']:.3f} | {_fmt(row['auc'])} | {_fmt(row['largest_drop'])} | "
                f"{_fmt(row['below_half_best'], 1)} | {row['train_seconds']:.1f} | "
                f"{_fmt(row['time_ratio'], 2)} |")
        lines.append("")
    missing = result.get("failures", []) + [{"cell": n, "error": ""} for n in result.get("notes", [])]
    lines += ["## Missing", ""]
    lines += [f"- {m['cell']} {m['error']}".rstrip() for m in missing] or ["- nothing: every planned cell finished"]
    lines += ["", f"Cells planned: {result.get('planned', len(result['records']))}, finished: "
              f"{len(result['records'])}. Raw records: `results.jsonl`.", ""]
    plots = _plots(table, out)
    lines += [f"![{p.stem}]({p.name})" for p in plots]
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def _plots(table: dict[str, dict[str, dict[str, Any]]], out: Path) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    paths = []
    for env_id, rows in sorted(table.items()):
        curves = {m: r["curve"] for m, r in rows.items() if r["curve"]}
        if not curves:
            continue
        figure, axis = plt.subplots(figsize=(6, 4))
        for method, curve in sorted(curves.items()):
            axis.plot([s for s, _ in curve], [v for _, v in curve], marker="o", label=method)
        axis.set(xlabel="training step", ylabel="validation success", title=env_id)
        axis.legend(fontsize=7)
        path = out / f"curves-{env_id.split('/')[-1]}.png"
        figure.tight_layout()
        figure.savefig(path, dpi=100)
        plt.close(figure)
        paths.append(path)
    points = [(r["train_seconds"], r["final_mean"], f"{env_id.split('/')[-1]}:{m}")
              for env_id, rows in table.items() for m, r in rows.items() if r["kind"] == "train"]
    if points:
        figure, axis = plt.subplots(figsize=(6, 4))
        for seconds, success, label in points:
            axis.scatter(seconds, success)
            axis.annotate(label, (seconds, success), fontsize=6)
        axis.set(xlabel="training seconds", ylabel="final test success",
                 title="final performance vs training time")
        path = out / "final-vs-time.png"
        figure.tight_layout()
        figure.savefig(path, dpi=100)
        plt.close(figure)
        paths.append(path)
    return paths
