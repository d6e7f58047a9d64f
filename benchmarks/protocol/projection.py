"""Dry-run cost projection for a benchmark matrix, from what has been measured so far.

Each cell's projected seconds, and the basis it rests on:

- ``finished``: the cell's own wall time (``cells/<key>/result.json`` made under this preset's
  fingerprint; a record made under other settings is re-run, so it is projected like a cell
  not run yet);
- ``own steps``: a training cell with logged steps (an interrupted run under ``runs/<key>``):
  its mean seconds per training step (every timed phase, validation included) × its steps;
- ``env steps``: the same, with the mean step time measured on this env's other training cells;
- ``preset guess``: ``seconds_per_cell`` of the benchmark preset (nothing measured yet).

So a GPU user can run the matrix for a few minutes, stop it, and get a projection of the whole
matrix from the step times measured on their own machine.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

from baselines.run_log import read_metrics
from benchmarks.protocol.matrix import BenchmarkPreset, Cell, cell_config, preset_fingerprint
from benchmarks.protocol.merge import json_object_or_none


def measured_step_seconds(run_root: Path) -> list[float]:
    """Seconds of each logged training step (step >= 1) in the runs under ``run_root``."""
    seconds = []
    for metrics in sorted(run_root.rglob("metrics.jsonl")):
        for row in read_metrics(metrics.parent):
            if row.get("step", 0) >= 1 and "phase_seconds" in row:
                seconds.append(float(sum(row["phase_seconds"].values())))
    return seconds


def project(cells: list[Cell], out: Path, preset: BenchmarkPreset) -> dict[str, tuple[float, str]]:
    """``{cell key: (projected seconds, basis)}`` (see the module docstring)."""
    own = {c.key: measured_step_seconds(out / "runs" / c.key) for c in cells if c.kind == "train"}
    by_env: dict[str, list[float]] = defaultdict(list)
    for cell in cells:
        by_env[cell.env_id] += own.get(cell.key, [])
    projection = {}
    fingerprint = preset_fingerprint(preset)
    for cell in cells:
        record = json_object_or_none(out / "cells" / cell.key / "result.json")
        if record is not None and record.get("preset_fingerprint") == fingerprint:
            projection[cell.key] = (float(record.get("wall_seconds", 0.0)), "finished")
        elif cell.kind == "train" and (own[cell.key] or by_env[cell.env_id]):
            basis = "own steps" if own[cell.key] else "env steps"
            per_step = statistics.fmean(own[cell.key] or by_env[cell.env_id])
            projection[cell.key] = (per_step * cell_config(cell, preset, out).steps, basis)
        else:
            projection[cell.key] = (preset.seconds_per_cell, "preset guess")
    return projection
