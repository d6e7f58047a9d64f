"""Read a benchmark run folder as it is on disk, finished or still running: what ``sdgym view``
shows. Nothing here writes; every file is the one the benchmark itself writes.

A run folder holds ``plan.json`` (the planned cells and the preset's fingerprint),
``cells/<key>/result.json`` (a finished cell's record) or ``cells/<key>/failure.json``,
``runs/<key>/<env>/<method>/seed<N>/`` (a training or warm-start cell's run folder:
``metrics.jsonl``, ``episodes.jsonl``, ``test_episodes.jsonl``), and, once a report is written,
``report.md``/``report.html`` and figures.
A cell is ``finished`` (a record under the plan's fingerprint), ``stale`` (a record made under
other settings: it will be re-run), ``failed``, ``running`` (its run folder has logged steps) or
``waiting``. Files being written (a torn JSON line or record) count as not there yet.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baselines.episode_log import TEST_EPISODES_FILE, read_episodes
from baselines.run_log import METRICS_FILE, read_metrics
from benchmarks.protocol.merge import PLAN_FILE, json_object_or_none

FIGURE_SUFFIXES = (".png", ".svg")


class RunFolderError(ValueError):
    """A folder that is not (yet) a benchmark run folder; the message says why."""


@dataclass
class CellView:
    """One planned cell and what the folder says about it."""

    key: str
    kind: str
    env: str
    method: str
    seed: int
    status: str
    record: dict[str, Any] | None = None
    run_dir: Path | None = None

    @property
    def success(self) -> float | None:
        """Mean test success over the cell's outcomes (``None`` until it finished)."""
        outcomes = (self.record or {}).get("outcomes") or []
        if not outcomes:
            return None
        return sum(bool(o.get("success")) for o in outcomes) / len(outcomes)


@dataclass
class RunFolder:
    """A benchmark run folder read from disk (see the module docstring)."""

    path: Path
    preset: str
    fingerprint: str
    cells: list[CellView] = field(default_factory=list)

    def cell(self, key: str) -> CellView:
        """The planned cell ``key``."""
        for cell in self.cells:
            if cell.key == key:
                return cell
        raise KeyError(f"{self.path} plans no cell {key!r}")

    @property
    def envs(self) -> list[str]:
        """The envs of the planned cells, in plan order."""
        return list(dict.fromkeys(cell.env for cell in self.cells))

    def figures(self) -> list[str]:
        """File names of the report figures in the folder."""
        return sorted(p.name for p in self.path.iterdir()
                      if p.is_file() and p.suffix in FIGURE_SUFFIXES)


_CELL_KEY = re.compile(r"^(?P<kind>[a-z]+)-(?P<env>.+?-v\d+)-(?P<method>.+)-seed(?P<seed>\d+)$")


def split_key(key: str) -> tuple[str, str, str, int]:
    """``(kind, env, method, seed)`` of a cell key ``<kind>-<Env-vN>-<method>-seed<N>``
    (:attr:`benchmarks.protocol.matrix.Cell.key`)."""
    match = _CELL_KEY.match(key)
    if match is None:
        raise ValueError(f"{key!r} is not a cell key")
    return match["kind"], match["env"], match["method"], int(match["seed"])


def _training_run(folder: Path, key: str) -> Path | None:
    runs = sorted((folder / "runs" / key).glob(f"*/*/seed*/{METRICS_FILE}"))
    return runs[0].parent if runs else None


def read_run_folder(path: str | Path) -> RunFolder:
    """Read the run folder ``path``; :class:`RunFolderError` says what is missing."""
    folder = Path(path)
    if not folder.is_dir():
        raise RunFolderError(f"{folder} is not a folder")
    plan = json_object_or_none(folder / PLAN_FILE)
    if plan is None or not isinstance(plan.get("cells"), list):
        what = "is unreadable" if (folder / PLAN_FILE).exists() else "is missing"
        raise RunFolderError(f"{folder} is not a benchmark run folder (yet): its {PLAN_FILE} "
                             f"{what}; `sdgym benchmark --out {folder}` writes it when it starts")
    fingerprint = str(plan.get("preset_fingerprint", ""))
    run = RunFolder(folder, str(plan.get("preset", folder.name)), fingerprint)
    for key in plan["cells"]:
        try:
            kind, env, method, seed = split_key(str(key))
        except ValueError:
            continue
        cell_dir = folder / "cells" / key
        record = json_object_or_none(cell_dir / "result.json")
        run_dir = _training_run(folder, key)
        if record is not None:
            status = "finished" if record.get("preset_fingerprint") == fingerprint else "stale"
        elif (cell_dir / "failure.json").exists():
            status = "failed"
        elif run_dir is not None:
            status = "running"
        else:
            status = "waiting"
        run.cells.append(CellView(key, kind, env, method, seed, status,
                                  record if status == "finished" else None, run_dir))
    return run


def validation_curve(cell: CellView) -> list[tuple[int, float]]:
    """``(step, val/success)`` of a training cell so far (from its ``metrics.jsonl``)."""
    if cell.run_dir is None:
        return []
    try:
        rows = read_metrics(cell.run_dir)
    except (OSError, ValueError):  # being written
        return []
    return [(int(row["step"]), float(row["val/success"])) for row in rows
            if "val/success" in row and "step" in row]


def cell_episodes(cell: CellView) -> list[dict[str, Any]]:
    """The training episodes a cell's run recorded (``episodes.jsonl``), in order."""
    return read_episodes(cell.run_dir) if cell.run_dir is not None else []


def cell_test_episodes(cell: CellView) -> list[dict[str, Any]]:
    """The test-panel episodes a cell's run recorded (``test_episodes.jsonl``), in order; none
    for a run made before they were recorded, or with ``infra.test_episodes_mb = 0``."""
    if cell.run_dir is None:
        return []
    return read_episodes(cell.run_dir, TEST_EPISODES_FILE)


def grid_cells(run: RunFolder, env: str) -> list[CellView]:
    """The cells of ``run`` that the task grid of ``env`` counts: its finished training and
    warm-start cells."""
    return [cell for cell in run.cells if cell.env == env and cell.kind in ("train", "start")
            and cell.record is not None]


@dataclass
class TaskGrid:
    """Test success per task of each method of one env, and its difference to GRPO's."""

    env: str
    tasks: list[str]
    methods: list[str]
    success: dict[str, dict[str, float]]
    """method -> task -> mean success over training seeds and rollout seeds."""

    def versus_grpo(self, method: str, task: str) -> str:
        """``win``/``loss``/``tie`` of ``method`` against GRPO on ``task`` (``""`` if either
        did not run it)."""
        mine, grpo = self.success[method].get(task), self.success.get("grpo", {}).get(task)
        if mine is None or grpo is None:
            return ""
        return "win" if mine > grpo else "loss" if mine < grpo else "tie"

    def tally(self, method: str) -> dict[str, int]:
        """How many tasks ``method`` wins, ties and loses against GRPO."""
        counts = {"win": 0, "tie": 0, "loss": 0}
        for task in self.tasks:
            verdict = self.versus_grpo(method, task)
            if verdict:
                counts[verdict] += 1
        return counts


def task_grid(runs: list[RunFolder], env: str) -> TaskGrid:
    """The :class:`TaskGrid` of ``env`` over the finished training cells of ``runs`` (each task
    is one test-panel task; a method's success on it is the mean over every seed that ran it)."""
    totals: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    methods: list[str] = []
    for run in runs:
        for cell in grid_cells(run, env):
            name = cell.method
            if name not in methods:
                methods.append(name)
            for outcome in cell.record.get("outcomes") or []:
                totals[name][str(outcome.get("task_id"))].append(float(bool(outcome.get("success"))))
    tasks = sorted({task for per in totals.values() for task in per})
    success = {m: {t: sum(v) / len(v) for t, v in totals[m].items()} for m in methods}
    order = sorted(methods, key=lambda m: (m != "grpo", methods.index(m)))
    return TaskGrid(env, tasks, order, success)
