"""``sdgym train``: one training run from a preset, with overrides, resumable.

Under ``torchrun --nproc-per-node N -m sdgym.cli train ...`` the run is data-parallel over N ranks
(:mod:`baselines.distributed`); rank 0 writes the run folder and prints the summary.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from baselines.config import TrainConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``sdgym train``."""
    _add_common_arguments(parser)
    parser.add_argument("--no-eval", action="store_true", help="skip the final test evaluation")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the per-GPU memory plan and run nothing")
    parser.add_argument("--gpus", type=int, default=None,
                        help="GPUs the --dry-run plans for (default: WORLD_SIZE, else 1)")
    _add_config_options(parser)


def add_sft_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``sdgym sft`` (the training options, plus ``--export``)."""
    _add_common_arguments(parser)
    parser.add_argument("--export", default=None, metavar="DIR",
                        help="also write the warm start to DIR as float16 with its recipe, "
                             "model card and prompt format (as agents/warm_starts/ ships them)")
    _add_config_options(parser)


def _add_config_options(parser: argparse.ArgumentParser) -> None:
    from baselines.config_options import add_config_options

    add_config_options(parser)


def _add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """What ``sdgym train`` and ``sdgym sft`` share: env, method, preset, seed, overrides."""
    from baselines.config import available_presets
    from baselines.heads import available_heads
    from sdgym.registration import all_environments

    parser.add_argument("--env", default=None,
                        help="env id, short id or extra (default: the preset's); one of "
                             + ", ".join(e.env_id for e in all_environments()))
    parser.add_argument("--method", default="grpo", metavar="METHOD",
                        help="GRPO or a teacher head (default grpo); one of "
                             + ", ".join(available_heads()))
    parser.add_argument("--preset", default="cpu-mini", metavar="PRESET",
                        help="training preset (default cpu-mini), or a TOML file; one of "
                             + ", ".join(available_presets()))
    parser.add_argument("--seed", type=int, default=0,
                        help="training seed: model init, sampling and task order (default 0)")
    parser.add_argument("--steps", type=int, default=None,
                        help="training steps (rollout + update each; default: the preset's)")
    parser.add_argument("--out", default="runs",
                        help="output folder; the run goes to OUT/<env>/<method>/seed<N> with "
                             "checkpoints, metrics.jsonl, TensorBoard events and summary.json "
                             "(default runs)")
    parser.add_argument("--resume", action="store_true", help="continue from the latest checkpoint")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config field by its dotted path (VALUE: a Python "
                             "literal, else a string), or one key of a table: sft.steps=200, "
                             "grpo.kl_coef=0.01, head.teacher_weights=frozen, env.size=small, "
                             "rollout.prompt.history=0 (the typed options below do the same)")


def _config(args: argparse.Namespace, check_model: bool = True):
    import sys

    from agents.warm_starts import resolve_model
    from baselines.config import LEGACY_NAMES, load_preset
    from baselines.config_options import config_settings
    from sdgym.cli import parse_env_kwargs
    from sdgym.registration import entry_for

    settings = parse_env_kwargs(args.set, "--set")
    for key in settings:
        old = key.split(".", 1)[0]
        if "." not in key and old in LEGACY_NAMES and old != "model":
            print(f"note: --set {key} is now --set {LEGACY_NAMES[old]}", file=sys.stderr)
    settings |= config_settings(args)
    overrides = {"method": args.method, "seed": args.seed, "out_dir": args.out}
    if args.env:
        overrides["env_id"] = entry_for(args.env).env_id
    if args.steps is not None:
        overrides["steps"] = args.steps
    config = load_preset(args.preset, settings, **overrides)
    if check_model:
        resolve_model(config.model.name)  # a missing model folder fails now, naming it
    return config


def dry_run(args: argparse.Namespace) -> int:
    """Print the memory plan of the run ``args`` describe (and what to change if it cannot fit)."""
    import os

    from baselines.memory_plan import fit_advice, plan_memory
    from sdgym.cli import check_at_least

    config = _config(args, check_model=False)  # the plan needs the model's config, not weights
    gpus = args.gpus or int(os.environ.get("WORLD_SIZE", "1"))
    check_at_least("--gpus", gpus)
    print(plan_memory(config, gpus).table())
    advice = fit_advice(config, gpus)
    if advice:
        print(advice)
    return 0


def run_sft(args: argparse.Namespace) -> int:
    """Build (or reuse) the SFT warm start of the preset and print its folder."""
    import logging

    from baselines.warm_start import sft_cache_key, warm_start

    progress = logging.getLogger("sdgym.sft")
    progress.setLevel(logging.INFO)
    if not progress.handlers:  # one handler, however often this runs in a process
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        progress.addHandler(handler)
    config = _config(args)
    folder = warm_start(config)
    print(f"SFT warm start: {folder}")
    if args.export:
        from agents.warm_starts import export_warm_start

        sft = json.loads((folder / "sft.json").read_text())
        last = sft["losses"][-100:]
        from baselines.config_options import config_settings

        overrides = "".join(f" --set {pair}" for pair in args.set) + "".join(
            f" --set {path}={value!r}" for path, value in config_settings(args).items())
        command = f"sdgym sft --preset {args.preset}{overrides} --export {args.export}"
        record = {"preset": args.preset, "command": command, "recipe_hash": sft_cache_key(config),
                  "config": config.to_dict(), "demonstrations": sft["demonstrations"],
                  "first_loss": sft["losses"][0], "last_loss": sum(last) / len(last)}
        print(f"exported (float16) to {export_warm_start(folder, Path(args.export), record)}")
    return 0


def check_resumable(config: TrainConfig, resume: bool) -> None:
    """With ``--resume``, ValueError unless the run folder exists (else a mistyped ``--out``,
    ``--env``, ``--method`` or ``--seed`` would silently start a new run)."""
    if resume and not config.run_dir().is_dir():
        raise ValueError(f"--resume: no run to resume at {config.run_dir()} (no such folder); "
                         "check --out, --env, --method and --seed, or drop --resume")


def run(args: argparse.Namespace) -> int:
    """Train, evaluate on the test split, print the summary."""
    from baselines.distributed import check_device
    from baselines.heads import available_heads
    from baselines.trainer import Trainer
    from sdgym.cache import atomic_write_text
    from sdgym.cli import check_writable

    if args.method not in available_heads():
        raise ValueError(f"unknown --method {args.method!r}; choose from {available_heads()}")
    if args.dry_run:
        return dry_run(args)
    check_writable(args.out)
    config = _config(args)
    check_device(config.infra.device)
    check_resumable(config, args.resume)
    trainer = Trainer(config, resume=args.resume, progress=True)
    main = trainer.parallel.is_main  # under torchrun only rank 0 evaluates and reports
    try:
        summary = trainer.fit()
        if not args.no_eval and (main or trainer.sharded):  # sharded: all ranks join the gather
            summary["test"] = trainer.evaluate()
            if main:
                atomic_write_text(trainer.run_dir / "summary.json",
                                  json.dumps(summary, indent=2, default=str))
    finally:
        trainer.close()
    if not main:
        return 0
    print(json.dumps({k: summary[k] for k in ("env_id", "method", "auc", "train_seconds")
                      if k in summary} | {"test": summary.get("test", {}).get("success_mean")}))
    print(f"run folder: {trainer.run_dir}")
    return 0
