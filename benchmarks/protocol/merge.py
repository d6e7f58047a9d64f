"""Merge benchmark run folders into one result, refusing folders whose protocols disagree.

A run folder (``sdgym benchmark --out DIR``) holds ``cells/<cell>/result.json`` for each finished
cell, ``failure.json`` for each failed one and ``plan.json`` (the planned cell keys; folders of
older runs lack it). :func:`merge_runs` reads several such folders, made on one machine or many,
into the ``{"records", "failures", "notes", "planned"}`` dict :func:`~benchmarks.protocol.report.
write_report` takes, so one report covers every setting the folders ran.

A **setting** is an env × a model size (:func:`setting_of`): the size each record's run recorded
(``model_size``, :func:`agents.warm_starts.model_size`), ``tiny`` for records made before the
model-scale axis. Here its key is the env id for the ``tiny`` size, so folders of those runs
merge as before, and ``<env id>@<size>`` for any other (``sdgym/WebShop-v0@tiny-l``); a report
names it by its env id alone where the env ran at one size, else ``<env id>@<size>`` for each
size, ``tiny`` included (:func:`report_settings`). Reference baselines have no model: they
belong to every setting of their env.

Two folders may both hold cells of one setting only when they ran it under the same protocol: the
same test split and test tasks, the same rollout seeds, the same training budget (steps), the same
warm start and the same training seeds. Otherwise :func:`merge_runs` raises ValueError naming the
setting, the field and both values. A cell found in two folders is taken from the first one named
(cells of one env at two sizes are two cells: their keys gain ``@<size>`` here). Cells are missing
when a folder planned them and has no result, and, per setting, for every trained method and
training seed of that setting that has no record (a method one folder ran in a setting and another
folder did not).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.model_sizes import DEFAULT_SIZE, MODEL_SIZES

PLAN_FILE = "plan.json"
"""Name of the planned-cells file :func:`benchmarks.protocol.matrix.run_matrix` writes."""

TRAINED_KINDS = ("start", "train")
"""Record kinds that follow the training protocol (a ``start`` row is the warm start tested)."""


SIZES_KEY = "model_sizes"
"""Key of ``plan.json`` holding ``{env id: model size}`` of the run's trained envs."""

_KEY_ENV = re.compile(r"^(?P<kind>[a-z]+)-(?P<env>.+?-v\d+)-")
"""The kind and env name of a cell key (:attr:`benchmarks.protocol.matrix.Cell.key`)."""


def record_size(record: dict[str, Any]) -> str:
    """The model size of ``record``'s setting: its ``model_size``; ``tiny`` for a record made
    before the model-scale axis (every run then used the ``tiny`` size) or for a reference
    baseline (no model)."""
    if record.get("kind") == "baseline":
        return DEFAULT_SIZE
    return str(record.get("model_size") or DEFAULT_SIZE)


def setting_key(env_id: str, size: str) -> str:
    """The key of the setting ``env_id`` × ``size``: ``env_id`` for the ``tiny`` size, else
    ``<env_id>@<size>``."""
    return env_id if size == DEFAULT_SIZE else f"{env_id}@{size}"


def split_setting(setting: str) -> tuple[str, str]:
    """``(env id, model size)`` of a :func:`setting_key`."""
    env_id, _, size = setting.partition("@")
    return env_id, size or DEFAULT_SIZE


def setting_of(record: dict[str, Any]) -> str:
    """The setting key of a record (a baseline's: its env's ``tiny`` setting)."""
    return setting_key(record["env_id"], record_size(record))


def env_sizes(records: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """``{env id: [model size, ...]}`` (smallest first, :func:`size_order`) of the records that ran
    a model (not the reference baselines)."""
    sizes: dict[str, set[str]] = defaultdict(set)
    for record in records:
        if record.get("kind") != "baseline":
            sizes[record["env_id"]].add(record_size(record))
    return {env_id: sorted(found, key=size_order) for env_id, found in sizes.items()}


def report_settings(record: dict[str, Any], sizes: dict[str, list[str]]) -> list[str]:
    """The report's keys of the settings ``record`` belongs to, given the report's
    :func:`env_sizes`: the env id where the env ran at one size in the report (a report of one
    size reads as before the axis), ``<env id>@<size>`` where it ran at several; a reference
    baseline belongs to every setting of its env."""
    env_id, found = record["env_id"], sizes.get(record["env_id"], [])
    if len(found) <= 1:
        return [env_id]
    if record.get("kind") == "baseline":
        return [f"{env_id}@{size}" for size in found]
    return [f"{env_id}@{record_size(record)}"]


def size_order(size: str) -> tuple[int, list[Any]]:
    """Sort key of model sizes: the :data:`~agents.model_sizes.MODEL_SIZES` ones smallest first,
    then the others by name with their numbers compared as numbers (``Qwen3.5-9B`` before
    ``Qwen3.5-27B``)."""
    sizes = list(MODEL_SIZES)
    rank = sizes.index(size) if size in sizes else len(sizes)
    return rank, [int(part) if part.isdigit() else part
                  for part in re.split(r"(\d+)", size.lower())]


def setting_order(setting: str) -> tuple[str, tuple[int, list[Any]]]:
    """Sort key of setting keys: by env, then by model size (:func:`size_order`)."""
    env_id, size = split_setting(setting)
    return env_id, size_order(size)


def cell_id(key: str, size: str) -> str:
    """A cell key that tells sizes apart: ``key`` at the ``tiny`` size, else ``<key>@<size>``."""
    return key if size == DEFAULT_SIZE else f"{key}@{size}"


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
    is not a run folder); failed and planned keys as :func:`cell_id` at the size each env ran at
    (its records', else ``plan.json``'s)."""
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
    plan = _read_json(folder / PLAN_FILE) if (folder / PLAN_FILE).exists() else {}
    sizes = {env_id.split("/")[-1]: size for env_id, size in plan.get(SIZES_KEY, {}).items()}
    sizes |= {r["env_id"].split("/")[-1]: record_size(r) for r in records
              if r.get("kind") != "baseline"}  # what ran wins over what was planned
    planned = plan.get("cells")
    for failure in failures:
        failure["cell"] = _qualified(failure["cell"], sizes)
    return {"folder": str(folder), "records": records, "failures": failures,
            "planned": None if planned is None else [_qualified(k, sizes) for k in planned]}


def _qualified(key: str, sizes: dict[str, str]) -> str:
    """A cell key of a folder whose envs ran at ``sizes`` (env name -> size), as :func:`cell_id`."""
    match = _KEY_ENV.match(key)
    if match is None or match["kind"] == "baseline":
        return key
    return cell_id(key, sizes.get(match["env"], DEFAULT_SIZE))


def _record_id(record: dict[str, Any]) -> str:
    return cell_id(record["cell"], record_size(record))


def _panel(record: dict[str, Any]) -> str:
    """The test tasks of ``record`` as a short, comparable description."""
    tasks = sorted({str(o.get("task_id", o.get("task_index"))) for o in record.get("outcomes", [])})
    digest = hashlib.sha256("\n".join(tasks).encode()).hexdigest()[:8]
    return f"{len(tasks)} tasks (digest {digest})"


def protocol(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{setting: {field: value}}``: what each setting's trained and start cells ran under."""
    by_setting: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record.get("kind") in TRAINED_KINDS:
            by_setting[setting_of(record)].append(record)
    out: dict[str, dict[str, Any]] = {}
    for setting, group in by_setting.items():
        trained = [r for r in group if r["kind"] == "train"]
        out[setting] = {
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
    """Cell keys (:func:`cell_id`) of every trained method × training seed of each setting without
    a record (the methods: those trained in any setting of ``records``)."""
    methods = sorted({r["method"] for r in records if r.get("kind") == "train"})
    have = {_record_id(r) for r in records}
    missing = []
    for setting in sorted({setting_of(r) for r in records if r.get("kind") in TRAINED_KINDS}):
        seeds = sorted({r["seed"] for r in records
                        if r.get("kind") in TRAINED_KINDS and setting_of(r) == setting})
        env_id, size = split_setting(setting)
        name = env_id.split("/")[-1]
        missing += [key for seed in seeds for key in
                    [cell_id(f"start-{name}-sft-start-seed{seed}", size),
                     *(cell_id(f"train-{name}-{method}-seed{seed}", size) for method in methods)]
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
            key = _record_id(record)
            if key in records:
                notes.append(f"{key}: in several folders, taken from the first")
                continue
            records[key] = record
        planned.update(run["planned"] or [_record_id(r) for r in run["records"]]
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
