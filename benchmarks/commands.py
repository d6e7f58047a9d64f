"""The ``sdgym`` subcommands this layer adds (entry-point group ``sdgym.commands``, declared in
``pyproject.toml``); their ``benchmarks.protocol`` modules are imported only when they run."""

from __future__ import annotations

from sdgym.subcommands import Command

BASELINE = Command(help="reference policies (random, expert, MaskablePPO); --table: all envs, "
                        "easy splits",
                   handler="benchmarks.protocol.baseline_cli:run")
BENCHMARK = Command(help="run a benchmark preset, write its report",
                    handler="benchmarks.protocol.cli:run")
REPORT = Command(help="merge benchmark run folders into one report (protocols must agree)",
                 handler="benchmarks.protocol.report_cli:run")
VIEW = Command(help="browse benchmark run folders on 127.0.0.1: cells, task grid, episodes",
               handler="benchmarks.protocol.view_cli:run")
