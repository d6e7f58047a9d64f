"""``sdgym baseline`` without ``--table``: reference policies (random, expert, MaskablePPO).

``sdgym baseline --env ID --algo random,expert,maskable_ppo`` evaluates those policies on the
installed envs, with a progress bar per (env, policy), and writes ``results.jsonl`` in the
benchmark's record format (``kind="baseline"``, ``method``, per-seed success/score,
``train_seconds``), so reports can mix reference baselines and LLM runs. The command itself, and
its ``--table`` mode (a benchmark preset's baseline cells), are in
:mod:`benchmarks.protocol.baseline_cli`, one layer up.

Splits: ``--split easy`` evaluates on each env's easy evaluation split (the one its class declares
in ``easy_splits`` with the role ``"val"``, else ``test``); MaskablePPO trains on its easy
``"train"`` split, else ``train``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from baselines.reference.run import ALGOS, run_baseline
from sdgym.registration import all_environments, entry_for, implemented


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
                        help="split MaskablePPO trains on (default: the env's easy train split, "
                             "else train)")
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


def check_inputs(args: argparse.Namespace, env_ids: list[str], split: str) -> None:
    """One-line errors, before MaskablePPO trains: a split an env lacks (``--split``,
    ``--ppo-split``), fewer than one episode or seed, an ``--out`` that cannot be made."""
    from baselines.reference.run import evaluation_split
    from sdgym.cli import check_at_least, check_writable
    from sdgym.registration import env_class

    for env_id in env_ids:
        for name in (evaluation_split(split, env_id), args.ppo_split):
            if name is not None:
                env_class(env_id).check_split(name)
    check_at_least("--episodes", args.episodes)
    check_at_least("--seeds", args.seeds)
    check_writable(args.out or "reports/baselines")


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
    entries = {e.env_id: e for e in all_environments() if implemented(e) and e.installed()}
    available = list(entries)
    env_ids = [entry_for(name).env_id for name in args.env] if args.env else available
    missing = [e for e in env_ids if e not in available]
    if missing:
        raise ValueError(f"not installed or unknown: {missing}; installed: {available}")
    split = args.split or "test"
    check_inputs(args, env_ids, split)
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
