"""Put a benchmark's measured teacher premise on the warm start's model card.

``python -m benchmarks.protocol.record_premise RUN_DIR --commit SHA --command "sdgym benchmark
..." [--date YYYY-MM-DD]`` reads every ``premise-*`` cell of the run folder and records it in the
measured warm start's ``sdgym_warm_start.json`` (``measured``), then rewrites its ``README.md``
card (:mod:`agents.warm_starts.model_card`). The weights are not touched.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from agents.warm_starts import shipped_warm_starts
from agents.warm_starts.model_card import add_measurement
from benchmarks.protocol.premise import warm_start_measurement


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.protocol.record_premise",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="benchmark run folder with premise-* cells")
    parser.add_argument("--commit", required=True, help="commit the run was made on")
    parser.add_argument("--command", required=True, help="the command that made the run")
    parser.add_argument("--date", default=datetime.date.today().isoformat(),
                        help="date of the run (default today)")
    args = parser.parse_args(argv)
    cells = sorted(Path(args.run).glob("cells/premise-*/result.json"))
    if not cells:
        print(f"error: {args.run}: no premise-*/result.json cell", file=sys.stderr)
        return 2
    shipped = shipped_warm_starts()
    for path in cells:
        record = json.loads(path.read_text())
        name = record.get("model_name")
        if name not in shipped:
            print(f"skipped {path.parent.name}: {name!r} is not a shipped warm start")
            continue
        card = add_measurement(shipped[name], warm_start_measurement(
            record, args.date, args.commit, args.command))
        print(f"{name}: premise of {path.parent.name} recorded; card {card}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
