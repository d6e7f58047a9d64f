"""``sdgym baseline``: reference policies (random, expert, MaskablePPO) on the installed envs.

Two modes, one record format (the benchmark's, so reports can mix reference baselines and LLM
runs: ``kind="baseline"``, ``method``, per-seed success/score, ``train_seconds``):

- ``sdgym baseline --env ID --algo random,expert,maskable_ppo``: evaluate those policies, with a
  progress bar per (env, policy), and write ``results.jsonl``.
- ``sdgym baseline --table [--preset cpu-mini-bench]``: the baseline part of a benchmark preset
  (``baseline_envs``, ``baseline_algos``, MaskablePPO on ``ppo_envs``) on each env's easy split,
  run resumably as benchmark cells; writes ``results.jsonl``, the benchmark's ``report.md`` and
  ``table.md`` (one row per env, one column per policy).

Splits: ``--split easy`` evaluates on each env's easy evaluation split (``easy_val`` where the env
has one, else ``easy``, else ``test``); MaskablePPO trains on ``easy_train``, else ``easy``, else
``train`` (ALFWorld's only easy split, ``easy``, is used for both).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from baselines.reference.run import ALGOS, EASY, run_baseline
from sdgym.registration import ENVIRONMENTS, entry_for, implemented


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``sdgym baseline``."""
    parser.add_argument("--env", action="append", default=None,
                        help="env id (repeatable; default: every installed env, or with --table "
                             "the preset's baseline envs)")
    parser.add_argument("--algo", default="random,expert",
                        help=f"comma-separated, from {sorted(ALGOS)}")
    parser.add_argument("--ppo-timesteps", type=int, default=20_000,
                        help="MaskablePPO training steps per env")
    parser.add_argument("--ppo-split", default=None,
                        help="split MaskablePPO trains on (default: easy_train, else easy, else "
                             "train)")
    parser.add_argument("--split", default=None,
                        help="evaluation split, or 'easy' for each env's easy one (default: test; "
                             "with --table: easy)")
    parser.add_argument("--episodes", type=int, default=16, help="tasks per rollout seed")
    parser.add_argument("--seeds", type=int, default=8, help="number of rollout seeds")
    parser.add_argument("--out", default=None,
                        help="output folder (default reports/baselines, with --table "
                             "reports/baseline-table-<preset>)")
    parser.add_argument("--env-kwarg", action="append", default=[], metavar="[ID:]KEY=VALUE",
                        help="keyword for gym.make, for every env or for ID only, "
                             "e.g. SearchQA-v0:size=tiny")
    parser.add_argument("--table", action="store_true",
                        help="run the baseline part of a benchmark preset (random, expert, "
                             "MaskablePPO; its algos, envs, budgets, episodes, seeds and env "
                             "kwargs replace --algo/--ppo-timesteps/--episodes/--seeds/"
                             "--env-kwarg) and write a table")
    parser.add_argument("--preset", default="cpu-mini-bench",
                        help="benchmark preset for --table (name or TOML file)")


def run(args: argparse.Namespace) -> int:
    """``sdgym baseline``: the per-policy evaluation, or with ``--table`` the preset's table."""
    return run_table(args) if args.table else run_policies(args)


def run_policies(args: argparse.Namespace) -> int:
    """Evaluate each requested policy on each requested env and write ``results.jsonl``."""
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from sdgym.cli import env_kwargs_for

    algos = [a.strip() for a in args.algo.split(",") if a.strip()]
    unknown = [a for a in algos if a not in ALGOS]
    if unknown:
        raise ValueError(f"unknown --algo {unknown}; choose from {sorted(ALGOS)}")
    entries = {e.env_id: e for e in ENVIRONMENTS if implemented(e) and e.installed()}
    available = list(entries)
    env_ids = [entry_for(name).env_id for name in args.env] if args.env else available
    missing = [e for e in env_ids if e not in available]
    if missing:
        raise ValueError(f"not installed or unknown: {missing}; installed: {available}")
    split = args.split or "test"
    out = Path(args.out or "reports/baselines")
    out.mkdir(parents=True, exist_ok=True)
    console = Console()
    table = Table(title=f"reference baselines on {split} ({args.seeds} seeds)")
    for column in ("env", "policy", "split", "success mean ± std", "score", "seconds"):
        table.add_column(column)
    records = []
    with Progress(console=console, transient=True) as progress:
        for env_id in env_ids:
            kwargs = env_kwargs_for(entries[env_id], args.env_kwarg)
            for algo in algos:
                task = progress.add_task(f"{env_id} {algo}", total=args.episodes * args.seeds)
                record = run_baseline(
                    env_id, algo, kwargs, split=split, episodes=args.episodes,
                    seeds=range(args.seeds), ppo_timesteps=args.ppo_timesteps,
                    ppo_split=args.ppo_split, progress=lambda n, t=task: progress.advance(t, n),
                )
                records.append(record)
                table.add_row(env_id, algo, record["split"],
                              f"{record['success_mean']:.3f} ± {record['success_std']:.3f}",
                              f"{record['score_mean']:.3f}",
                              f"{record['train_seconds'] + record['seconds']:.1f}")
    with (out / "results.jsonl").open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    console.print(table)
    console.print(f"wrote {out / 'results.jsonl'}")
    return 0


def run_table(args: argparse.Namespace) -> int:
    """The baseline cells of a benchmark preset on the easy splits, ``report.md`` and ``table.md``."""
    from rich.console import Console
    from rich.progress import Progress

    from baselines.benchmark.matrix import load_benchmark_preset, plan, run_matrix
    from baselines.benchmark.report import write_report

    preset = load_benchmark_preset(args.preset)
    preset = replace(preset, envs=[], baseline_envs=args.env or preset.baseline_envs,
                     baseline_split=args.split or EASY)
    out = Path(args.out or f"reports/baseline-table-{preset.name}")
    out.mkdir(parents=True, exist_ok=True)
    console = Console()
    cells, _ = plan(preset)
    with Progress(console=console) as progress:
        task = progress.add_task(f"{preset.name} baselines", total=len(cells))

        def on_cell(cell, status: str) -> None:
            progress.advance(task)
            progress.console.print(f"{status:>7}  {cell.key}")

        result = run_matrix(preset, out, on_cell=on_cell)
    write_report(result, out, f"sdgym reference baselines — {preset.name}")
    missing = [f"{f['cell']}: {f['error']}" for f in result["failures"]] + result["notes"]
    table = baseline_table(result["records"], missing)
    (out / "table.md").write_text(table)
    console.print(table, soft_wrap=True, markup=False)
    console.print(f"wrote {out / 'table.md'}, {out / 'report.md'}, {out / 'results.jsonl'}")
    return 1 if result["failures"] else 0


def baseline_table(records: Sequence[dict[str, Any]], missing: Sequence[str] = ()) -> str:
    """Markdown: one row per env, one ``success mean ± std`` column per policy (and the split)."""
    algos = [a for a in ALGOS if any(r["method"] == a for r in records)]
    by_env: dict[str, dict[str, dict[str, Any]]] = {}
    for record in records:
        by_env.setdefault(record["env_id"], {})[record["method"]] = record
    lines = ["| env | split | " + " | ".join(algos) + " |",
             "|---|---|" + "---|" * len(algos)]
    for env_id, row in by_env.items():
        split = next(iter(row.values()))["split"]
        cells = [f"{row[a]['success_mean']:.3f} ± {row[a]['success_std']:.3f}" if a in row else "–"
                 for a in algos]
        lines.append(f"| {env_id} | {split} | " + " | ".join(cells) + " |")
    lines += ["", "Success rate, mean ± std over rollout seeds; privileged info hidden except for "
              "the expert. MaskablePPO trains on the easy training split first."]
    lines += [f"- missing: {m}" for m in missing]
    return "\n".join(lines) + "\n"
