"""Keep a benchmark run's results in the repository: ``python -m benchmarks.protocol.archive
RUN_DIR DEST``.

A run folder holds checkpoints and TensorBoard files under ``runs/`` (hundreds of MB) beside what
the results are: ``plan.json``, each cell's ``result.json`` / ``failure.json``, ``report.md``,
``report.html`` and the figures. The archive copies only those (a few MB), so it can be committed
(``results/<date>/<preset>/``), read by ``sdgym report DEST ...`` as any run folder, and copied
back under ``reports/`` to resume the run on another machine or session: finished cells are found
by their ``result.json`` and fingerprint and are not run again. A ``failure.json`` keeps the last
line of each attempt's traceback (the error, which is what reports show): the frames above it
name paths of the machine that ran it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

KEPT = ("plan.json", "report.md", "report.html", "*.png")
CELL_FILES = ("result.json", "failure.json")


def archive_run(run: str | Path, dest: str | Path) -> int:
    """Copy the results of ``run`` into ``dest`` (replacing what ``dest`` had of them); return
    the number of cells copied. ValueError when ``run`` is not a run folder."""
    run, dest = Path(run), Path(dest)
    if not (run / "cells").is_dir():
        raise ValueError(f"{run}: not a benchmark run folder (no cells/ folder)")
    dest.mkdir(parents=True, exist_ok=True)
    for pattern in KEPT:
        for path in sorted(run.glob(pattern)):
            shutil.copy2(path, dest / path.name)
    cells = 0
    for cell in sorted(p for p in (run / "cells").iterdir() if p.is_dir()):
        files = [cell / name for name in CELL_FILES if (cell / name).is_file()]
        if not files:
            continue
        target = dest / "cells" / cell.name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for path in files:
            if path.name == "failure.json":
                _copy_failure(path, target / path.name)
            else:
                shutil.copy2(path, target / path.name)
        cells += 1
    return cells


def _copy_failure(source: Path, target: Path) -> None:
    """Copy a cell's failure record with each error cut to its traceback's last line."""
    failure = json.loads(source.read_text())
    errors = failure.get("errors") or []
    failure["errors"] = [(error.strip().splitlines() or [""])[-1] for error in errors]
    target.write_text(json.dumps(failure, indent=2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.protocol.archive",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="benchmark run folder (sdgym benchmark --out)")
    parser.add_argument("dest", help="folder to copy the results into, e.g. results/DATE/PRESET")
    args = parser.parse_args(argv)
    try:
        cells = archive_run(args.run, args.dest)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"archived {cells} cells of {args.run} into {args.dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
