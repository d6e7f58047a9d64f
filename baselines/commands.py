"""The ``sdgym`` subcommands this layer adds (entry-point group ``sdgym.commands``, declared in
``pyproject.toml``); :mod:`baselines.train_cli` runs them and is imported only then."""

from __future__ import annotations

from sdgym.subcommands import Command

TRAIN = Command(help="train an LLM agent with GRPO or a teacher head",
                handler="baselines.train_cli:run")
SFT = Command(help="build the SFT warm start from expert demos",
              handler="baselines.train_cli:run_sft")
