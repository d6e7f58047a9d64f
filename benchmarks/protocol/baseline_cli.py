"""``sdgym baseline``: reference policies (random, expert, MaskablePPO) on the installed envs.

Two modes, one record format (the benchmark's, so reports can mix reference baselines and LLM
runs: ``kind="baseline"``, ``method``, per-seed success/score, ``train_seconds``):

- ``sdgym baseline --env ID --algo random,expert,maskable_ppo``: evaluate those policies, with a
  progress bar per (env, policy), and write ``results.jsonl`` (:mod:`baselines.reference.cli`).
- ``sdgym baseline --table [--preset cpu-mini-bench]``: the baseline part of a benchmark preset
  (``baseline_envs``, ``baseline_algos``, MaskablePPO on ``ppo_envs``) on each env's easy split,
  run resumably as benchmark cells; writes ``results.jsonl``, the benchmark's ``report.md`` and
  ``table.md`` (one row per env, one column per policy, :func:`.baseline_table.baseline_table`).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from baselines.reference import cli as reference_cli
from baselines.reference.run import EASY


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``sdgym baseline``: the per-policy ones, ``--table`` and ``--preset``."""
    reference_cli.add_arguments(parser)
    parser.add_argument("--table", action="store_true",
                        help="run the baseline part of a benchmark preset (random, expert, "
                             "MaskablePPO; its algos, envs, budgets, episodes, seeds and env "
                             "kwargs replace --algo/--ppo-timesteps/--episodes/--seeds/"
                             "--env-kwarg) and write a table")
    parser.add_argument("--preset", default="cpu-mini-bench",
                        help="benchmark preset for --table (name or TOML file)")


def run(args: argparse.Namespace) -> int:
    """``sdgym baseline``: the per-policy evaluation, or with ``--table`` the preset's table."""
    return run_table(args) if args.table else reference_cli.run_policies(args)


def run_table(args: argparse.Namespace) -> int:
    """The baseline cells of a benchmark preset on the easy splits, ``report.md`` and ``table.md``."""
    from rich.console import Console
    from rich.progress import Progress

    from benchmarks.protocol.baseline_table import baseline_table
    from benchmarks.protocol.matrix import load_benchmark_preset, plan, run_matrix
    from benchmarks.protocol.report import write_report
    from sdgym.cache import atomic_write_text

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
    atomic_write_text(out / "table.md", table)
    console.print(table, soft_wrap=True, markup=False)
    console.print(f"wrote {out / 'table.md'}, {out / 'report.md'}, {out / 'results.jsonl'}")
    return 1 if result["failures"] else 0
