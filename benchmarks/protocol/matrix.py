"""The benchmark run matrix: plan cells, run them resumably, never drop a failure silently.

A cell is one (kind, env, method, seed): ``baseline`` (random / expert reference policies),
``start`` (the SFT warm-start model evaluated before RL: a row of its own), ``premise`` (the warm
start's teacher with each context kind against its student on the validation panel,
:mod:`baselines.premise`; one per env) or ``train`` (GRPO or a teacher head). Each finished cell writes ``cells/<key>/result.json`` atomically; a re-run skips
those. A cell that raises is retried ``retries`` times, then recorded in ``failure.json`` and
reported as missing.

Cells run one after another here (``jobs=1``), on ``jobs`` reused worker processes of this
machine (:mod:`benchmarks.protocol.process_dispatch`), or as Ray tasks
(``dispatch=RayDispatch(...)``, :mod:`benchmarks.protocol.ray_dispatch`); either way this process
writes the result files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baselines.config import preset_path, read_preset
from baselines.typecheck import check_fields, field_default
from benchmarks.protocol.merge import PLAN_FILE, SIZES_KEY
from sdgym.cache import atomic_write_text, ran_out_of_disk
from sdgym.registration import all_environments, implemented

if TYPE_CHECKING:
    from baselines.config import TrainConfig
    from benchmarks.protocol.ray_dispatch import RayDispatch

PRESET_DIR = Path(__file__).parent / "presets"
SUFFIX = "-bench"
"""Benchmark preset files are ``<name>-bench.toml`` (unique beside the training presets); the
benchmark's name (its report folder, ``reports/<name>``) leaves the suffix out, and so may
``--preset``."""


ALL_METHODS = "all"
"""``methods = "all"`` in a benchmark preset: GRPO and every head sdgym ships, in their table
order (:func:`baselines.heads.shipped_heads`). The list is expanded before the preset's
fingerprint is taken, so spelling it out or writing ``"all"`` runs (and reuses) the same cells."""


@dataclass
class BenchmarkPreset:
    """What a benchmark runs (see ``benchmarks/protocol/presets/*.toml``)."""

    name: str
    train_preset: str
    envs: list[str]
    methods: list[str]
    """Methods trained in every env: registered head names, or ``"all"`` (:data:`ALL_METHODS`)."""
    seeds: list[int]
    baseline_envs: list[str] = field(default_factory=list)
    baseline_algos: list[str] = field(default_factory=lambda: ["random", "expert"])
    baseline_episodes: int = 16
    baseline_seeds: int = 8
    ppo_envs: list[str] = field(default_factory=list)
    """Envs that also get a MaskablePPO baseline (trained for ``ppo_timesteps`` steps)."""
    ppo_timesteps: int = 5_000
    ppo_timesteps_per_env: dict[str, int] = field(default_factory=dict)
    """Per-env override of ``ppo_timesteps`` (slow engines get a smaller budget)."""
    baseline_split: str = "test"
    """Split the reference baselines are evaluated on; ``"easy"``: each env's easy one."""
    baseline_episodes_per_env: dict[str, int] = field(default_factory=dict)
    """Per-env override of ``baseline_episodes`` (slow engines get fewer tasks per seed)."""
    retries: int = 1
    """Attempts after a cell's first one raised (any error)."""
    disk_full_retries: int = 4
    """Further attempts after a cell ran out of disk space, waiting between them (a disk shared
    with other jobs fills and frees in bursts); these do not use up ``retries``."""
    disk_full_wait_seconds: float = 30.0
    """The first wait before a disk-full retry; each further wait doubles it."""
    env_kwargs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per-env kwargs of every cell of that env, set over the training preset's ``env_kwargs``
    key by key (a key the benchmark does not name keeps the training preset's value)."""
    baseline_env_kwargs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per-env kwargs of the reference baselines only, over ``env_kwargs`` (e.g. a small
    WebShop catalogue for PPO while the trained cells use the full one)."""
    train_overrides: dict[str, Any] = field(default_factory=dict)
    """Training-config overrides of every trained cell: top-level fields, or section tables
    merged field by field (``{"evaluation": {"test_episodes": 400}}``)."""
    train_overrides_per_env: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per-env overrides applied after ``train_overrides`` (sections merged field by field)."""
    description: str = ""
    train_presets: dict[str, str] = field(default_factory=dict)
    """Per-env training preset overriding ``train_preset``."""
    seconds_per_cell: float = 60.0
    """Dry-run projection for cells not yet measured in the output folder."""
    premise: bool = False
    """Measure the teacher premise of each trained env (one ``premise`` cell per env: the warm
    start's teacher with every context the preset's heads read, against its student)."""
    premise_methods: list[str] = field(default_factory=list)
    """Heads whose contexts the premise cell measures (``"all"``: GRPO and every head sdgym
    ships); empty (default): the preset's own ``methods``. Part 1 of a setting split into parts
    (``cpu-alfworld``, ``cpu-scienceworld``) names ``"all"``, so its premise covers the heads the
    other parts train."""
    premise_episodes: int | None = None
    """Tasks of the premise's validation panel (``None``: the training preset's ``val_episodes``)."""
    premise_pool_seeds: int = 3
    """Student attempts per task that the ``sibling`` / ``hindsight`` contexts are made from
    (a group of 4 has 3 other members)."""

    def __post_init__(self) -> None:
        check_fields(self)


def available_benchmark_presets() -> list[str]:
    """Names of the benchmark preset files."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def load_benchmark_preset(name: str) -> BenchmarkPreset:
    """Read a benchmark preset by name (``cpu-mini-bench`` or ``cpu-mini``) or path, with its
    ``extends`` chain (:func:`baselines.config.read_preset`)."""
    path = preset_path(name, PRESET_DIR, "benchmark", SUFFIX)
    values = read_preset(path, PRESET_DIR, "benchmark", SUFFIX)
    known = {f.name for f in dataclasses.fields(BenchmarkPreset)} - {"name"}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"{path.name}: unknown benchmark options {unknown}")
    for key in ("methods", "premise_methods"):
        if values.get(key) == ALL_METHODS:
            from baselines.heads import shipped_heads

            values[key] = shipped_heads()
    return BenchmarkPreset(name=path.stem.removesuffix(SUFFIX), **values)


@dataclass(frozen=True)
class Cell:
    """One unit of work in the matrix."""

    kind: str
    env_id: str
    method: str
    seed: int

    @property
    def key(self) -> str:
        """Folder name of the cell."""
        return f"{self.kind}-{self.env_id.split('/')[-1]}-{self.method}-seed{self.seed}"


RUN_CONTROL_FIELDS = ("retries", "disk_full_retries", "disk_full_wait_seconds", "description")
"""Preset fields that change how cells are run or described, not what they measure: left out of
the fingerprint, so changing them re-runs nothing."""

HASHED_WHEN_SET = ("premise_methods",)
"""Preset fields added after runs were archived: in the fingerprint only where set away from their
default, so every older run's fingerprint holds."""


def preset_fingerprint(preset: BenchmarkPreset) -> str:
    """Hash of the benchmark preset, the training preset files it names and the weights of the
    shipped warm starts they start from: a finished cell whose record carries another
    fingerprint was made under other settings (or from another model of the same name) and is
    re-run."""
    from baselines.config import PRESET_DIR, load_preset, preset_chain

    train_files: dict[str, Any] = {}
    models: dict[str, str | None] = {}
    for name in sorted({preset.train_preset, *preset.train_presets.values()}):
        path = Path(name) if name.endswith(".toml") else PRESET_DIR / f"{name}.toml"
        if not path.exists():
            train_files[name] = None
            continue
        chain = [p.read_text() for p in preset_chain(path, PRESET_DIR, "training")]
        train_files[name] = chain[0] if len(chain) == 1 else chain  # a base edited: re-run
        model = load_preset(name).model.name
        models[model] = shipped_weights_digest(model)
    unset = {item.name for item in dataclasses.fields(preset) if item.name in HASHED_WHEN_SET
             and getattr(preset, item.name) == field_default(item)}
    settings = {name: value for name, value in dataclasses.asdict(preset).items()
                if name not in RUN_CONTROL_FIELDS and name not in unset}
    data = json.dumps([settings, train_files, models], sort_keys=True,
                      default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def shipped_weights_digest(model: str) -> str | None:
    """SHA-256 of a shipped warm start's weight files (``None`` for any other model name)."""
    from agents.warm_starts import shipped_warm_starts, weights_digest

    folder = shipped_warm_starts().get(model)
    return None if folder is None else weights_digest(folder)


def installed_envs() -> set[str]:
    """Env ids whose module and extra are installed here."""
    return {e.env_id for e in all_environments() if implemented(e) and e.installed()}


def plan(preset: BenchmarkPreset) -> tuple[list[Cell], list[str]]:
    """The cells to run, and notes on what was left out (envs not installed)."""
    here = installed_envs()
    cells: list[Cell] = []
    notes: list[str] = []
    for env_id in preset.baseline_envs:
        if env_id not in here:
            notes.append(f"{env_id}: not installed; its reference baselines are missing")
            continue
        cells += [Cell("baseline", env_id, algo, 0) for algo in preset.baseline_algos]
        if env_id in preset.ppo_envs:
            cells.append(Cell("baseline", env_id, "maskable_ppo", 0))
    for env_id in preset.envs:
        if env_id not in here:
            notes.append(f"{env_id}: not installed; its training cells are missing")
            continue
        if preset.premise and _premise_contexts(preset):
            cells.append(Cell("premise", env_id, "premise", 0))
        for seed in preset.seeds:
            cells.append(Cell("start", env_id, "sft-start", seed))
            cells += [Cell("train", env_id, method, seed) for method in preset.methods]
    return cells, notes


def _premise_contexts(preset: BenchmarkPreset) -> list[str]:
    """The context kinds the preset's heads (its ``premise_methods``, else its ``methods``) read,
    in :data:`baselines.teacher.CONTEXT_KINDS` order."""
    from baselines.teacher import CONTEXT_KINDS
    from benchmarks.protocol.premise import context_heads

    used = context_heads(preset.premise_methods or preset.methods)
    return [context for context in CONTEXT_KINDS if context in used]


def _write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, default=str))


def train_overrides(preset: BenchmarkPreset, env_id: str) -> dict[str, Any]:
    """``train_overrides`` with ``train_overrides_per_env[env_id]`` over it (a section table is
    merged field by field, any other value replaced)."""
    merged = dict(preset.train_overrides)
    for key, value in preset.train_overrides_per_env.get(env_id, {}).items():
        base = merged.get(key)
        merged[key] = {**base, **value} if isinstance(base, dict) and isinstance(value, dict) \
            else value
    return merged


def cell_config(cell: Cell, preset: BenchmarkPreset, out: Path) -> TrainConfig:
    """The training config of a ``start``, ``premise`` or ``train`` cell (the first two train 0
    steps)."""
    from baselines.config import load_preset

    settings = {f"env_kwargs.{key}": value
                for key, value in preset.env_kwargs.get(cell.env_id, {}).items()}
    config = load_preset(preset.train_presets.get(cell.env_id, preset.train_preset), settings,
                         env_id=cell.env_id,
                         method=cell.method if cell.kind == "train" else "grpo", seed=cell.seed,
                         out_dir=str(out / "runs" / cell.key), **train_overrides(preset, cell.env_id))
    if cell.kind != "train":
        config.steps = 0
    return config


def run_cell(cell: Cell, preset: BenchmarkPreset, out: Path) -> dict[str, Any]:
    """Run one cell and return its result record."""
    env_kwargs = {**preset.env_kwargs.get(cell.env_id, {}),
                  **preset.baseline_env_kwargs.get(cell.env_id, {})}
    started = time.perf_counter()
    if cell.kind == "baseline":
        from baselines.reference.run import run_baseline

        record = run_baseline(
            cell.env_id, cell.method, env_kwargs, split=preset.baseline_split,
            episodes=preset.baseline_episodes_per_env.get(cell.env_id, preset.baseline_episodes),
            seeds=range(preset.baseline_seeds),
            ppo_timesteps=preset.ppo_timesteps_per_env.get(cell.env_id, preset.ppo_timesteps))
    elif cell.kind == "premise":
        from baselines.premise import measure_premise
        from baselines.trainer import Trainer

        config = cell_config(cell, preset, out)
        trainer = Trainer(config, resume=True)
        try:
            record = measure_premise(trainer, _premise_contexts(preset),
                                     pool_seeds=preset.premise_pool_seeds,
                                     episodes=preset.premise_episodes)
        finally:
            trainer.close()
        record.update(model_name=config.model.name, val_episodes=config.evaluation.val_episodes)
    else:
        from baselines.trainer import Trainer

        config = cell_config(cell, preset, out)
        trainer = Trainer(config, resume=True)
        try:
            if cell.kind == "train":
                trainer.fit()
            test = trainer.evaluate()
            summary = trainer.summary()  # after the test: its phase totals include it
        finally:
            trainer.close()
        record = {**summary, **test, "policy": cell.method, "model_name": config.model.name}
    if cell.kind != "baseline":  # the model-size half of the cell's setting (merge.setting_of)
        from agents.warm_starts import model_size

        record["model_size"] = model_size(config.model.name, config.model.tiny)
    record.update(kind=cell.kind, env_id=cell.env_id, method=cell.method, seed=cell.seed,
                  cell=cell.key, wall_seconds=time.perf_counter() - started)
    return record


def model_sizes(preset: BenchmarkPreset) -> dict[str, str]:
    """``{env id: model size}`` of the preset's trained envs (:func:`agents.warm_starts.
    model_size` of each env's training preset; an env whose training preset does not load is
    left out: its cells fail and say why)."""
    from agents.warm_starts import model_size
    from baselines.config import load_preset

    sizes = {}
    for env_id in preset.envs:
        try:
            model = load_preset(preset.train_presets.get(env_id, preset.train_preset)).model
        except (OSError, ValueError):
            continue
        sizes[env_id] = model_size(model.name, model.tiny)
    return sizes


CellRunner = Callable[["Cell", BenchmarkPreset, Path], dict[str, Any]]
CellOutcome = tuple[dict[str, Any] | None, list[str]]
"""A cell's record (``None`` when every attempt failed) and the tracebacks of failed attempts."""


def attempt_cell(cell: Cell, preset: BenchmarkPreset, out: Path,
                 runner: CellRunner = run_cell) -> CellOutcome:
    """Run ``cell``, retrying ``preset.retries`` times when it raises, and after a full disk
    another ``preset.disk_full_retries`` times with a doubling wait in between."""
    errors = []
    crashes = disk_fulls = 0
    while True:
        try:
            return runner(cell, preset, out), errors
        except Exception as error:  # a crashed cell is retried, then recorded, never dropped
            errors.append(traceback.format_exc())
            if ran_out_of_disk(error) and disk_fulls < preset.disk_full_retries:
                time.sleep(preset.disk_full_wait_seconds * 2 ** disk_fulls)
                disk_fulls += 1
            elif crashes < preset.retries:
                crashes += 1
            else:
                return None, errors


def run_matrix(
    preset: BenchmarkPreset,
    out: str | Path,
    on_cell: Callable[[Cell, str], None] | None = None,
    runner: CellRunner = run_cell,
    dispatch: RayDispatch | None = None,
    jobs: int = 1,
) -> dict[str, Any]:
    """Run every planned cell not yet finished; return records, failures and notes.

    ``jobs`` > 1 runs the pending cells on that many worker processes here; ``dispatch`` runs
    them as Ray tasks instead.
    """
    out = Path(out)
    cells, notes = plan(preset)
    by_key: dict[str, dict[str, Any]] = {}
    failures = []
    pending = []
    fingerprint = preset_fingerprint(preset)
    _write_json(out / PLAN_FILE, {"preset": preset.name, "preset_fingerprint": fingerprint,
                                  "cells": [cell.key for cell in cells],
                                  SIZES_KEY: model_sizes(preset)})
    for cell in cells:
        done = out / "cells" / cell.key / "result.json"
        record = json.loads(done.read_text()) if done.exists() else None
        if record is not None and record.get("preset_fingerprint") == fingerprint:
            by_key[cell.key] = record
            if on_cell:
                on_cell(cell, "cached")
        else:
            if record is not None:
                notes.append(f"{cell.key}: re-run, its result was made under other preset settings")
            pending.append(cell)
    outcomes: Iterable[tuple[Cell, CellOutcome]]
    if dispatch is None and jobs <= 1:
        outcomes = ((cell, attempt_cell(cell, preset, out, runner)) for cell in pending)
    elif dispatch is None:
        from benchmarks.protocol.process_dispatch import run_cells_in_processes

        outcomes = run_cells_in_processes(pending, attempt_cell, (preset, out, runner), jobs)
    else:
        from benchmarks.protocol.ray_dispatch import run_cells_on_ray

        outcomes = run_cells_on_ray(pending, attempt_cell, (preset, out, runner), dispatch,
                                    preset.retries)
    for cell, (record, errors) in outcomes:
        folder = out / "cells" / cell.key
        if record is not None:
            record["preset_fingerprint"] = fingerprint
            _write_json(folder / "result.json", record)
            (folder / "failure.json").unlink(missing_ok=True)
            by_key[cell.key] = record
        else:
            _write_json(folder / "failure.json", {"cell": cell.key, "errors": errors})
            failures.append({"cell": cell.key, "error": errors[-1].strip().splitlines()[-1]})
        if on_cell:
            on_cell(cell, "done" if record is not None else "failed")
    records = [by_key[cell.key] for cell in cells if cell.key in by_key]
    atomic_write_text(out / "results.jsonl",
                      "".join(json.dumps(record, default=str) + "\n" for record in records))
    return {"records": records, "failures": failures, "notes": notes, "planned": len(cells)}
