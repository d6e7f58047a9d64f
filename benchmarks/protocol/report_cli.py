"""``sdgym report RUN_DIR... --out DIR``: one report over several benchmark run folders."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``sdgym report``."""
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR",
                        help="benchmark run folders (`sdgym benchmark --out`), from one machine "
                             "or many; their protocols must agree for each env they share")
    parser.add_argument("--out", required=True,
                        help="folder for the merged report.md, figures and results.jsonl")
    parser.add_argument("--title", default=None,
                        help="the report's title (default: the folders' names)")
    parser.add_argument("--cost-measure", choices=("flops", "cpu", "wall"), default=None,
                        help="the report's training-cost measure (default: flops on CPU, wall "
                             "on GPU)")


def run(args: argparse.Namespace) -> int:
    """Merge the folders (:func:`benchmarks.protocol.merge.merge_runs`), write the report; exit
    1 when a cell is missing, 0 otherwise."""
    from rich.console import Console

    from benchmarks.protocol.merge import merge_runs
    from benchmarks.protocol.report import write_report
    from sdgym.cache import atomic_write_text
    from sdgym.cli import check_writable

    out = Path(args.out)
    check_writable(out)
    result = merge_runs(args.runs)
    title = args.title or "sdgym merged report — " + ", ".join(Path(r).name for r in args.runs)
    report = write_report(result, out, title, args.cost_measure)
    atomic_write_text(out / "results.jsonl", "".join(json.dumps(r, default=str) + "\n"
                                                     for r in result["records"]))
    console = Console()
    missing = len(result["missing"])
    console.print(f"merged {len(result['records'])} cells from {len(args.runs)} folder(s); "
                  f"{missing} missing; wrote {report}")
    return 1 if missing else 0
