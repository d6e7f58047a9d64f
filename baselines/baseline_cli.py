"""``sdgym baseline``: reference policies on every installed env, one table and a JSONL file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from baselines.evaluation import evaluate_policy
from baselines.reference_policies import POLICIES
from sdgym.registration import ENVIRONMENTS, implemented

ALGOS = (*POLICIES, "maskable_ppo")


def make_policy(algo: str, env_id: str, env_kwargs: dict, ppo_timesteps: int = 20_000,
                ppo_split: str | None = None):
    """The policy for ``algo`` (MaskablePPO is trained first, on the easy or train split)."""
    if algo != "maskable_ppo":
        return POLICIES[algo]()
    import gymnasium as gym

    from baselines.maskable_ppo import MaskablePPOPolicy, train_maskable_ppo

    probe = gym.make(env_id, **env_kwargs)
    splits = probe.unwrapped.splits
    probe.close()
    split = ppo_split or ("easy_train" if "easy_train" in splits else "train")
    return MaskablePPOPolicy(train_maskable_ppo(env_id, env_kwargs, split, ppo_timesteps))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``sdgym baseline``."""
    parser.add_argument("--env", action="append", default=None,
                        help="env id (repeatable; default: every installed env)")
    parser.add_argument("--algo", default="random,expert",
                        help=f"comma-separated, from {sorted(ALGOS)}")
    parser.add_argument("--ppo-timesteps", type=int, default=20_000,
                        help="MaskablePPO training steps per env")
    parser.add_argument("--ppo-split", default=None,
                        help="split MaskablePPO trains on (default: easy_train where the env has "
                             "one, else train)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--episodes", type=int, default=16, help="tasks per rollout seed")
    parser.add_argument("--seeds", type=int, default=8, help="number of rollout seeds")
    parser.add_argument("--out", default="reports/baselines", help="output folder")
    parser.add_argument("--env-kwarg", action="append", default=[], metavar="[ID:]KEY=VALUE",
                        help="keyword for gym.make, for every env or for ID only, "
                             "e.g. SearchQA-v0:size=tiny")


def run(args: argparse.Namespace) -> int:
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
    env_ids = args.env or available
    missing = [e for e in env_ids if e not in available]
    if missing:
        raise ValueError(f"not installed or unknown: {missing}; installed: {available}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    console = Console()
    table = Table(title=f"reference baselines on {args.split} ({args.seeds} seeds)")
    for column in ("env", "policy", "success mean ± std", "score", "seconds"):
        table.add_column(column)
    records = []
    with Progress(console=console, transient=True) as progress:
        for env_id in env_ids:
            kwargs = env_kwargs_for(entries[env_id], args.env_kwarg)
            for algo in algos:
                task = progress.add_task(f"{env_id} {algo}", total=args.episodes * args.seeds)
                result = evaluate_policy(
                    env_id, make_policy(algo, env_id, kwargs, args.ppo_timesteps, args.ppo_split), split=args.split, episodes=args.episodes,
                    seeds=range(args.seeds), env_kwargs=kwargs,
                    progress=lambda n, t=task: progress.advance(t, n),
                )
                records.append({**result.to_record(), "env_kwargs": kwargs})
                table.add_row(env_id, algo, f"{result.success_mean:.3f} ± {result.success_std:.3f}",
                              f"{result.score_mean:.3f}", f"{result.seconds:.1f}")
    with (out / "results.jsonl").open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    console.print(table)
    console.print(f"wrote {out / 'results.jsonl'}")
    return 0
