"""The ``sdgym`` subcommands this layer adds (entry-point group ``sdgym.commands``, declared in
``pyproject.toml``); :mod:`agents.evaluate_cli` runs them and is imported only then."""

from __future__ import annotations

from sdgym.subcommands import Command

EVAL = Command(help="evaluate an LLM policy on an env split",
               handler="agents.evaluate_cli:run_eval")
ROLLOUT = Command(help="sample an LLM policy, write turn rows",
                  handler="agents.evaluate_cli:run_rollout")
