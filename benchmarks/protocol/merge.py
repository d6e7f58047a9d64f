"""Merge benchmark run folders into one result, refusing folders whose protocols disagree.

A run folder (``sdgym benchmark --out DIR``) holds ``cells/<cell>/result.json`` for each finished
cell, ``failure.json`` for each failed one and ``plan.json`` (the planned cell keys; folders of
older runs lack it). :func:`merge_runs` reads several such folders, made on one machine or many,
into the ``{"records", "failures", "notes", "planned"}`` dict :func:`~benchmarks.protocol.report.
write_report` takes, so one report covers every setting the folders ran.

Two folders may both hold cells of one env only when they ran it under the same protocol: the
same test split and test tasks, the same rollout seeds, the same training budget (steps), the same
warm start and the same training seeds. Otherwise :func:`merge_runs` raises ValueError naming the
env, the field and both values. A cell found in two folders is taken from the first one named.
Cells are missing when a folder planned them and has no result, and, per env, for every trained
method and training seed of that env that has no record (a method one folder ran on an env and
another folder did not).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PLAN_FILE = "plan.json"
"""Name of the planned-cells file :func:`benchmarks.protocol.matrix.run_matrix` writes."""

TRAINED_KINDS = ("start", "train")
"""Record kinds that follow the training protocol (a ``start`` row is the warm start tested)."""


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a readable JSON file ({error})") from None


def json_object_or_none(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or ``None`` when the file is missing, being written (torn)
    or not an object: for readers of a run that may still be running."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def read_run(folder: str | Path) -> dict[str, Any]:
    """The records, failures and planned cell keys of one run folder (ValueError when ``folder``
    is not a run folder)."""
    folder = Path(folder)
    cells = folder / "cells"
    if not cells.is_dir():
        raise ValueError(f"{folder}: not a benchmark run folder (no cells/ folder)")
    records, failures = [], []
    for cell in sorted(p for p in cells.iterdir() if p.is_dir()):
        if (cell / "result.json").exists():
            records.append(_read_json(cell / "result.json"))
        elif (cell / "failure.json").exists():
            errors = _read_json(cell / "failure.json").get("errors") or [""]
            last = errors[-1].strip().splitlines()
            failures.append({"cell": cell.name, "error": last[-1] if last else ""})
    plan = folder / PLAN_FILE
    planned = _read_json(plan)["cells"] if plan.exists() else None
    return {"folder": str(folder), "records": records, "failures": failures, "planned": planned}


def _panel(record: dict[str, Any]) -> str:
    """The test tasks of ``record`` as a short, comparable description."""
    tasks = sorted({str(o.get("task_id", o.get("task_index"))) for o in record.get("outcomes", [])})
    digest = hashlib.sha256("\n".join(tasks).encode()).hexdigest()[:8]
    return f"{len(tasks)} tasks (digest {digest})"


def protocol(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{env_id: {field: value}}``: what each env's trained and start cells ran under."""
    by_env: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record.get("kind") in TRAINED_KINDS:
            by_env[record["env_id"]].append(record)
    out: dict[str, dict[str, Any]] = {}
    for env_id, group in by_env.items():
        trained = [r for r in group if r["kind"] == "train"]
        out[env_id] = {
            "test split": sorted({str(r.get("split")) for r in group}),
            "test panel": sorted({_panel(r) for r in group}),
            "rollout seeds": sorted({tuple(r.get("seeds") or ()) for r in group}),
            "budget (steps)": sorted({r.get("steps") for r in trained}),
            "warm start": sorted({str(r.get("model_name")) for r in group}),
            "training seeds": sorted({r["seed"] for r in group}),
        }
    return out


def _check_agreement(runs: Sequence[dict[str, Any]]) -> None:
    seen: dict[str, tuple[str, dict[str, Any]]] = {}
    for run in runs:
        for env_id, fields in protocol(run["records"]).items():
            if env_id not in seen:
                seen[env_id] = (run["folder"], fields)
                continue
            first, expected = seen[env_id]
            for name, value in fields.items():
                if name == "budget (steps)" and not (value and expected[name]):
                    continue  # a folder with only start cells has no budget to compare
                if value != expected[name]:
                    raise ValueError(f"{env_id}: {name} differs: {first} has {expected[name]}, "
                                     f"{run['folder']} has {value}; merge only runs of one "
                                     "protocol")


def missing_cells(records: Sequence[dict[str, Any]]) -> list[str]:
    """Cell keys of every trained method × training seed of each env without a record (the
    methods: those trained on any env of ``records``)."""
    methods = sorted({r["method"] for r in records if r.get("kind") == "train"})
    have = {r["cell"] for r in records}
    missing = []
    for env_id in sorted({r["env_id"] for r in records if r.get("kind") in TRAINED_KINDS}):
        seeds = sorted({r["seed"] for r in records
                        if r.get("kind") in TRAINED_KINDS and r["env_id"] == env_id})
        name = env_id.split("/")[-1]
        missing += [key for seed in seeds for key in
                    [f"start-{name}-sft-start-seed{seed}",
                     *(f"train-{name}-{method}-seed{seed}" for method in methods)]
                    if key not in have]
    return missing


def merge_runs(folders: Sequence[str | Path]) -> dict[str, Any]:
    """One result over ``folders`` (see the module docstring): records, failures, notes, the
    number of planned cells and the keys of the ``missing`` ones."""
    if not folders:
        raise ValueError("give at least one run folder")
    runs = [read_run(folder) for folder in folders]
    _check_agreement(runs)
    records: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    failures: list[dict[str, str]] = []
    planned: set[str] = set()
    for run in runs:
        for record in run["records"]:
            if record["cell"] in records:
                notes.append(f"{record['cell']}: in several folders, taken from the first")
                continue
            records[record["cell"]] = record
        planned.update(run["planned"] or [r["cell"] for r in run["records"]]
                       + [f["cell"] for f in run["failures"]])
    for run in runs:
        failures += [f for f in run["failures"] if f["cell"] not in records]
        notes += [f"{key}: planned in {run['folder']}, no result" for key in run["planned"] or []
                  if key not in records and key not in {f["cell"] for f in run["failures"]}]
    reported = {f["cell"] for f in failures} | {n.split(":")[0] for n in notes}
    for key in missing_cells(list(records.values())):
        if key not in reported:
            notes.append(f"{key}: no folder has it")
            planned.add(key)
    missing = sorted(planned - set(records))
    return {"records": list(records.values()), "failures": failures, "notes": notes,
            "planned": len(planned), "missing": missing,
            "sources": [str(Path(f)) for f in folders]}
