"""The benchmark report: intervals on every compared number, the paper's framing, cost, plots.

``report.md`` holds, per env, one row per method: how many training seeds × test tasks × rollout
seeds it rests on; final test success (mean and IQM, 95% stratified-bootstrap intervals over
training seeds × tasks, :mod:`benchmarks.protocol.statistics`); the paired difference to GRPO on
the same tasks and seeds with its interval, and the probability of improvement; validation AUC
(interval over training seeds when there are several); the largest validation drop; and the
training cost with its ratio to GRPO's, on a load-robust measure (model FLOPs from exact token
counts on CPU, where process CPU seconds moved up to 20% between identical runs; wall seconds on a
GPU), the other measures' ratios beside it. Then the framing of "More Methods, Better Agents?"
computed from those intervals; with several settings, a methods × settings table shaped like the
paper's; per env, which split each panel comes from. Figures: :mod:`benchmarks.protocol.figures`.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from baselines.heads import available_heads
from baselines.metrics import largest_drop
from benchmarks.protocol.figures import draw_figures
from benchmarks.protocol.merge import (
    env_sizes,
    record_size,
    report_settings,
    setting_order,
    size_order,
)
from benchmarks.protocol.premise import PREMISE_KIND, premise_table_lines, unmet_heads
from benchmarks.protocol.report_html import write_html_report
from benchmarks.protocol.size_effect import size_lines
from benchmarks.protocol.statistics import (
    Comparison,
    Interval,
    ScoreMatrix,
    compare_to_grpo,
    framing_lines,
    iqm_interval,
    mean_interval,
    paired,
    paired_difference,
    score_matrix,
    seed_consistency_lines,
    seed_interval,
)
from sdgym.cache import atomic_write_text

FLOP_MEASURE = "model FLOPs"
CPU_MEASURE = "process CPU seconds"
WALL_MEASURE = "wall seconds"
COST_MEASURES: dict[str, tuple[str, str]] = {
    "flops": (FLOP_MEASURE, "train_flops_estimate"),
    "cpu": (CPU_MEASURE, "train_cpu_seconds"),
    "wall": (WALL_MEASURE, "train_seconds"),
}
"""``--cost-measure`` choices: the report's name for each and the record field it reads."""


def default_cost_measure(records: list[dict[str, Any]]) -> str:
    """``flops`` on CPU (exact token counts: the same cell gives the same cost under any load,
    where CPU seconds moved up to 20% between two identical runs), ``wall`` on GPU (a dedicated
    device), ``cpu`` for records without FLOP estimates (older runs)."""
    trained = [r for r in records if r.get("kind") == "train"]
    if any(r.get("device", "cpu") != "cpu" for r in trained):
        return "wall"
    if trained and all(r.get("train_flops_estimate") for r in trained):
        return "flops"
    return "cpu"


def _cost(record: dict[str, Any], measure: str) -> float | None:
    value = record.get(COST_MEASURES[measure][1])
    return None if value is None else float(value)


def _final(group: list[dict[str, Any]], matrix: ScoreMatrix | None) -> tuple[Interval, Interval | None]:
    if matrix is not None:
        return mean_interval(matrix.values), iqm_interval(matrix.values)
    successes = [s for r in group for s in r.get("success_per_seed", [])]
    return Interval(statistics.fmean(successes) if successes else 0.0), None


def _mean_curve(group: list[dict[str, Any]]) -> list[tuple[float, float, float, float]]:
    """``(step, mean, min, max)`` over the training seeds at each validation step."""
    by_step: dict[float, list[float]] = defaultdict(list)
    for record in group:
        for step, value in record.get("validation") or []:
            by_step[step].append(value)
    return [(s, statistics.fmean(v), min(v), max(v)) for s, v in sorted(by_step.items())]


def summarise(records: list[dict[str, Any]], cost_measure: str | None = None,
              sizes: dict[str, list[str]] | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """``{setting: {method: row}}``: one row per method, its training seeds pooled; a setting is an
    env × a model size, keyed as :func:`benchmarks.protocol.merge.report_settings` names it (the
    env id where the env ran at one size), each row carrying its ``env_id`` and ``size``.
    ``cost`` and ``cost_ratio`` are on ``cost_measure`` (a :data:`COST_MEASURES` key; default
    :func:`default_cost_measure`); every row also has its FLOP, CPU-second and wall ratios.
    ``sizes``: the report's :func:`~benchmarks.protocol.merge.env_sizes` (default: those of
    ``records``)."""
    measure = cost_measure or default_cost_measure(records)
    if measure not in COST_MEASURES:
        raise ValueError(f"unknown cost measure {measure!r}; choose one of {sorted(COST_MEASURES)}")
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    sizes = env_sizes(records) if sizes is None else sizes
    for record in records:
        for setting in report_settings(record, sizes):
            cells[(setting, record["method"])].append(record)
    table: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for (setting, method), group in cells.items():
        matrix = score_matrix(group)
        final, iqm = _final(group, matrix)
        curve = _mean_curve(group)
        trained = [r for r in group if r["kind"] != "baseline"]
        means = {}
        for key in COST_MEASURES:
            values = [v for r in trained for v in [_cost(r, key)] if v]
            means[key] = statistics.fmean(values) if values else None
        per_seed_drop = [largest_drop([v for _, v in r["validation"]]) for r in group
                         if r.get("validation")]
        env_id = group[0]["env_id"]
        table[setting][method] = {
            "kind": group[0]["kind"], "env_id": env_id,
            "size": setting.partition("@")[2] or (sizes.get(env_id) or [record_size(group[0])])[0],
            "model": group[0].get("model_name", "tiny" if group[0]["kind"] != "baseline" else "-"),
            "final": final, "iqm": iqm, "matrix": matrix,
            "final_mean": final.point,
            "auc": seed_interval([r["auc"] for r in group if r.get("auc") is not None])
            if curve else None,  # a start row has no curve
            "auc_spread": (max(r["auc"] for r in group) - min(r["auc"] for r in group))
            if curve and len(group) > 1 else None,
            "largest_drop": statistics.fmean(per_seed_drop) if per_seed_drop else None,
            "cost": means[measure],
            "costs": means,
            "cost_measure": COST_MEASURES[measure][0],
            "train_seconds": statistics.fmean([r.get("train_seconds") or 0.0 for r in group]),
            "curve": curve,
            "seeds": len(group),
            "split": group[0].get("split"), "val_split": group[0].get("val_split"),
            "tasks": len(matrix.tasks) if matrix else None,
            "rollouts": matrix.rollout_seeds if matrix else None,
        }
    for rows in table.values():
        grpo = rows.get("grpo", {}).get("costs", {})
        for row in rows.values():
            row["ratios"] = {key: (row["costs"][key] / grpo[key]
                                   if grpo.get(key) and row["costs"][key] is not None
                                   and row["kind"] == "train" else None)
                             for key in COST_MEASURES}
            row["cost_ratio"] = row["ratios"][measure]
    return table


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _fmt_cost(value: float | None) -> str:
    return "–" if value is None else (f"{value:.3g}" if value >= 1e5 else f"{value:.1f}")


def _fmt_interval(value: Interval | None, signed: bool = False) -> str:
    return "–" if value is None else value.fmt(3, signed)


def comparisons(table: dict[str, dict[str, dict[str, Any]]]) -> list[Comparison]:
    """Every trained method against GRPO, per env (paired on the same seeds and tasks)."""
    matrices = {env: {m: r["matrix"] for m, r in rows.items()
                      if r["kind"] == "train" and r["matrix"] is not None}
                for env, rows in table.items()}
    costs = {env: {m: r["cost"] for m, r in rows.items() if r["cost"] is not None}
             for env, rows in table.items()}
    return compare_to_grpo(matrices, costs)


def stability_lines(table: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Which methods are unstable: the largest validation drop, and the AUC spread over seeds."""
    drops = sorted(((r["largest_drop"], f"{m} ({env.split('/')[-1]})")
                    for env, rows in table.items() for m, r in rows.items()
                    if r["kind"] == "train" and r["largest_drop"] is not None), reverse=True)
    if not drops:
        return []
    unstable = [f"{name} {drop:.2f}" for drop, name in drops if drop >= 0.25]
    line = ("**Unstable** (a validation drop of 0.25 or more between two points, mean over "
            "training seeds): " + (", ".join(unstable) if unstable else "none") + ".")
    named = (lambda m, env: f"{m} ({env.split('/')[-1]})") if len(table) > 1 else (
        lambda m, env: m)
    spreads = [f"{named(m, env)} {r['auc_spread']:.2f}" for env, rows in table.items()
               for m, r in rows.items() if r.get("auc_spread") is not None]
    if spreads:
        line += " AUC spread over training seeds (max − min): " + ", ".join(spreads) + "."
    else:
        line += " One training seed per method: no AUC spread to report."
    return [line]


POWER_TARGETS = {"final": 0.05, "difference": 0.08}
"""Half-widths the benchmark's panels aim for: each method's test success, and its paired
difference to GRPO (issue: the main job tells methods apart)."""


def _half_width(value: Interval | None) -> float | None:
    if value is None or value.low is None or value.high is None:
        return None
    return (value.high - value.low) / 2


def rl_effect_lines(table: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Whether RL did something measurable: GRPO against its own warm start (the ``sft-start``
    row), paired on the same training seeds and test tasks."""
    parts = []
    for env_id, rows in sorted(table.items(), key=lambda item: setting_order(item[0])):
        grpo, start = rows.get("grpo", {}).get("matrix"), rows.get("sft-start", {}).get("matrix")
        pair = paired(grpo, start) if grpo is not None and start is not None else None
        if pair is None:
            continue
        difference = paired_difference(*pair)
        verdict = {1: "better than", -1: "worse than", 0: "not distinguishable from"}[
            difference.excludes_zero()]
        parts.append(f"{env_id.split('/')[-1]}: GRPO is {verdict} its warm start, "
                     f"Δ {difference.fmt(3, signed=True)}")
    return [f"**RL effect** (paired on the same seeds and tasks): {'; '.join(parts)}."] if parts else []


def _env_power(rows: dict[str, dict[str, Any]], compared: list[Comparison]
               ) -> tuple[float | None, float | None]:
    """The widest test-success half-width of the trained rows and of the paired differences."""
    finals = [w for r in rows.values() if r["kind"] == "train"
              for w in [_half_width(r["final"])] if w is not None]
    differences = [w for c in compared for w in [_half_width(c.difference)] if w is not None]
    return (max(finals) if finals else None), (max(differences) if differences else None)


def _power_met(final: float, difference: float | None) -> bool:
    return final <= POWER_TARGETS["final"] and (
        difference is None or difference <= POWER_TARGETS["difference"])


def power_lines(table: dict[str, dict[str, dict[str, Any]]], compared: list[Comparison]) -> list[str]:
    """The widest intervals of this run against the targets the panel sizes aim for (per
    setting when there are several)."""
    per_env = {env_id: _env_power(rows, [c for c in compared if c.env_id == env_id])
               for env_id, rows in sorted(table.items(), key=lambda item: setting_order(item[0]))}
    finals = [f for f, _ in per_env.values() if f is not None]
    differences = [d for _, d in per_env.values() if d is not None]
    if not finals:
        return []
    final, difference = max(finals), (max(differences) if differences else None)
    line = (f"**Power**: widest test-success interval ±{final:.3f} (target "
            f"±{POWER_TARGETS['final']:.2f})")
    if difference is not None:
        line += (f"; widest paired difference to GRPO ±{difference:.3f} (target "
                 f"±{POWER_TARGETS['difference']:.2f})")
    line += (": targets met" if _power_met(final, difference) else
             ": targets not met; a tie here may be a difference this run is too small to see")
    settings = []
    for env_id, (env_final, env_difference) in per_env.items():
        if env_final is None:
            continue
        widths = f"±{env_final:.3f}" + (f" / ±{env_difference:.3f}"
                                        if env_difference is not None else "")
        verdict = "met" if _power_met(env_final, env_difference) else "not met"
        settings.append(f"{env_id.split('/')[-1]} {widths} ({verdict})")
    if len(settings) > 1:
        line += " (per setting, test success / paired difference: " + "; ".join(settings) + ")"
    return [line + "."]


def panel_line(rows: dict[str, dict[str, Any]]) -> str:
    """Which split each of an env's panels comes from, and its size."""
    trained = [r for r in rows.values() if r["kind"] in ("train", "start")] or list(rows.values())
    test = sorted({f"`{r['split']}` ({r['tasks']} tasks × {r['rollouts']} rollout seeds)"
                   for r in trained if r.get("split") and r["tasks"]})
    val = sorted({f"`{r['val_split']}`" for r in trained if r.get("val_split")})
    line = "Panels: final success on the test panel " + (", ".join(test) or "(split not recorded)")
    if any(r["curve"] for r in trained):
        line += "; validation curves and AUC on " + (", ".join(val) or "the training preset's "
                                                      "validation split (not recorded)")
    return line + ". Baseline rows use the benchmark's baseline split and panel (their shape column)."


def settings_table_lines(table: dict[str, dict[str, dict[str, Any]]],
                         compared: list[Comparison]) -> list[str]:
    """Methods × settings, the layout of the paper's Tables 2 and 3: one column per env, one block
    of rows per model size (its ``size`` column; smallest first), final test success [95% CI]
    and Δ vs GRPO; the best final per setting in bold, ↑ / ↓ where the paired interval is above /
    below 0."""
    settings = {(next(iter(rows.values()))["env_id"], next(iter(rows.values()))["size"]): key
                for key, rows in table.items() if "grpo" in rows}
    if not settings:
        return []
    envs = sorted({env for env, _ in settings})
    sizes = sorted({size for _, size in settings}, key=size_order)
    by_method = {(c.env_id, c.method): c for c in compared}
    best = {key: max(r["final"].point for r in table[key].values() if r["kind"] == "train")
            for key in settings.values()}
    lines = ["## All settings", "",
             "| size | method | " + " | ".join(env.split("/")[-1] for env in envs) + " |",
             "|---|---|" + "---|" * len(envs)]
    for size in sizes:
        keys = [settings.get((env, size)) for env in envs]
        methods = sorted({m for key in keys if key for m, r in table[key].items()
                          if r["kind"] in ("train", "start")},
                         key=lambda m: (m != "sft-start", m != "grpo", m))
        for method in methods:
            cells = []
            for key in keys:
                row = table[key].get(method) if key else None
                if row is None:
                    cells.append("–")
                    continue
                text = _fmt_interval(row["final"])
                if row["kind"] == "train" and row["final"].point == best[key]:
                    text = f"**{text}**"
                c = by_method.get((key, method))
                if c is not None:
                    mark = {"beats": " ↑", "worse": " ↓", "tie": ""}[c.verdict]
                    text += f" (Δ {c.difference.fmt(3, True)}{mark})"
                cells.append(text)
            lines.append(f"| {size} | {method} | " + " | ".join(cells) + " |")
    return lines + ["", "Final test success [95% CI] (Δ vs GRPO, paired [95% CI]); size: the model "
                    "size of the setting (agents.model_sizes); bold: the best trained method of "
                    "the setting; ↑ / ↓: the paired interval excludes 0 (better / worse than "
                    "GRPO). sft-start: the warm start before training.", ""]


def _other_ratios(row: dict[str, Any], measure: str) -> str:
    names = {"flops": "FLOPs", "cpu": "CPU s", "wall": "wall s"}
    parts = [f"{names[key]} {value:.2f}" for key, value in row["ratios"].items()
             if key != measure and value is not None]
    return " · ".join(parts) or "–"


def action_share_lines(records: list[dict[str, Any]]) -> list[str]:
    """One line: per method, the share of its test turns with no parsable action and the share
    the env refused (from the outcomes' ``unparsable_turns`` / ``refused_turns``; nothing for
    records made before they were counted), so a format problem reads apart from a weak policy."""
    totals: dict[str, list[int]] = {}
    for record in records:
        for outcome in record.get("outcomes") or []:
            if "unparsable_turns" not in outcome:
                continue
            total = totals.setdefault(record["method"], [0, 0, 0])
            total[0] += int(outcome["turns"])
            total[1] += int(outcome["unparsable_turns"])
            total[2] += int(outcome["refused_turns"])
    if not totals:
        return []
    parts = [f"{method} {unparsed / max(turns, 1):.1%} / {refused / max(turns, 1):.1%}"
             for method, (turns, unparsed, refused) in sorted(totals.items())]
    return ["Test turns with no parsable action / refused by the env: " + ", ".join(parts) + ".",
            ""]


def write_report(result: dict[str, Any], out: str | Path, title: str,
                 cost_measure: str | None = None) -> Path:
    """Write ``report.md`` and the plots into ``out``; return the report path. ``cost_measure``:
    a :data:`COST_MEASURES` key (default :func:`default_cost_measure`)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sizes = env_sizes(result["records"])  # premise cells count: a premise-only run has a size
    premises = {report_settings(r, sizes)[0]: r for r in result["records"]
                if r.get("kind") == PREMISE_KIND}
    records = [r for r in result["records"] if r.get("kind") != PREMISE_KIND]
    key = cost_measure or default_cost_measure(records)
    table = summarise(records, key, sizes)
    methods = sorted({r["method"] for r in records if r.get("kind") == "train"})
    unmet = {(setting, head) for setting, record in premises.items()
             for _, head in unmet_heads([record], methods)}
    compared = comparisons(table)
    by_method = {(c.env_id, c.method): c for c in compared}
    measure = COST_MEASURES[key][0]
    lines = [f"# {title}", ""]
    headline = (framing_lines(compared, measure) + seed_consistency_lines(compared)
                + stability_lines(table) + rl_effect_lines(table) + power_lines(table, compared))
    lines += [f"- {line}" for line in headline]
    lines += [""]
    lines += [f"Intervals: 95%, stratified bootstrap over training seeds × test tasks (rliable); "
              f"Δ is the paired difference to GRPO on the same tasks and seeds. Cost: {measure} "
              "of training (rollout, teacher and reference forwards, update; validation and "
              "test excluded). Model FLOPs are the 2·N (forward) / 6·N (forward + backward) "
              "per-token estimate from exact token counts: load cannot change them, but they "
              "count model compute only (not env steps, attention's context term or Python). "
              "Process CPU seconds are measured and move with machine load (up to ±20% per "
              "cell on a shared CPU); wall seconds move more.", ""]
    lines += settings_table_lines(table, compared) if len(table) > 1 else []
    lines += size_lines(table)
    for env_id in sorted(table, key=setting_order):
        rows = table[env_id]
        lines += [f"## {env_id}", "", panel_line(rows), "",
                  "| method | kind | model | seeds × tasks × rollouts | final success [95% CI] | "
                  "IQM [95% CI] | Δ vs GRPO [95% CI] | P(> GRPO) | AUC [95% CI] | largest drop | "
                  f"cost ({measure}) | cost ratio | other cost ratios |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        order = sorted(rows, key=lambda m: ({"baseline": 0, "start": 1, "train": 2}[rows[m]["kind"]],
                                            m != "grpo", m))
        for method in order:
            row = rows[method]
            c = by_method.get((env_id, method))
            name = f"{method} (premise not met)" if (env_id, method) in unmet else method
            shape = (f"{row['seeds']} × {row['tasks']} × {row['rollouts']}"
                     if row["tasks"] else f"{row['seeds']} × ? × ?")
            lines.append(
                f"| {name} | {row['kind']} | {row['model']} | {shape} | "
                f"{_fmt_interval(row['final'])} | {_fmt_interval(row['iqm'])} | "
                f"{_fmt_interval(c.difference, signed=True) if c else '–'} | "
                f"{_fmt_interval(c.improvement) if c else '–'} | {_fmt_interval(row['auc'])} | "
                f"{_fmt(row['largest_drop'], 2)} | {_fmt_cost(row['cost'])} | "
                f"{_fmt(row['cost_ratio'], 2)} | {_other_ratios(row, key)} |")
        lines.append("")
        lines += action_share_lines([r for r in records if env_id in report_settings(r, sizes)])
        if env_id in premises:
            lines += premise_table_lines(premises[env_id], methods)
    for env_id in sorted(set(premises) - set(table), key=setting_order):  # a premise-only run (cpu-premise)
        lines += [f"## {env_id}", "", *premise_table_lines(premises[env_id],
                                                          methods or available_heads())]
    missing = result.get("failures", []) + [{"cell": n, "error": ""} for n in result.get("notes", [])]
    lines += ["## Missing", ""]
    lines += [f"- {m['cell']} {m['error']}".rstrip() for m in missing] or ["- nothing: every planned cell finished"]
    lines += ["", f"Cells planned: {result.get('planned', len(result['records']))}, finished: "
              f"{len(result['records'])}. Raw records (every task × rollout-seed outcome): "
              "`results.jsonl`.", ""]
    plots = draw_figures(table, compared, out)
    lines += [f"![{p.stem}]({p.name})" for p in plots]
    path = out / "report.md"
    atomic_write_text(path, "\n".join(lines) + "\n")  # a full disk keeps the last report whole
    write_html_report(path)  # report.html: the same, figures embedded, one file to share
    return path
