"""``sdgym report RUN_DIR... --out DIR``: one report over several benchmark run folders."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


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
    """Merge the folders, write the report; exit 1 when a cell is missing, 0 otherwise."""
    from rich.console import Console

    from sdgym.cli import check_writable

    out = Path(args.out)
    check_writable(out)
    title = args.title or "sdgym merged report — " + ", ".join(Path(r).name for r in args.runs)
    return write_merged_report(args.runs, out, title, args.cost_measure, Console(),
                               show_report=False)


def write_merged_report(folders: Sequence[str | Path], out: Path, title: str,
                        cost_measure: str | None, console: Console,
                        show_report: bool) -> int:
    """Merge ``folders`` (:func:`benchmarks.protocol.merge.merge_runs`: refuses folders whose
    protocols disagree), write ``report.md``, figures and ``results.jsonl`` into ``out``; exit
    code 1 when a cell is missing."""
    from benchmarks.protocol.merge import merge_runs
    from benchmarks.protocol.report import write_report
    from sdgym.cache import atomic_write_text

    result = merge_runs(folders)
    report = write_report(result, out, title, cost_measure)
    atomic_write_text(out / "results.jsonl", "".join(json.dumps(r, default=str) + "\n"
                                                     for r in result["records"]))
    if show_report:
        console.print(report.read_text(), markup=False, highlight=False)  # Markdown as written
    missing = len(result["missing"])
    console.print(f"merged {len(result['records'])} cells from {len(folders)} folder(s); "
                  f"{missing} missing; wrote {report}")
    return 1 if missing else 0
