"""Checkpoints that resume exactly: model, optimizer, RNG states, step and data position.

A checkpoint is a folder ``step-<n>`` written to a temporary sibling and renamed into place, with
a manifest of its files' SHA-256 digests (:mod:`sdgym.cache`), and ``latest.json`` is a small
JSON file replaced atomically (``os.replace``) after the folder exists, so a kill at any moment
leaves the previous complete checkpoint as the latest one. A full disk raises
:class:`sdgym.cache.DiskFullError` naming the file, with the previous checkpoint the latest.

Loading checks the digests: a checkpoint that is missing, truncated, empty or changed on disk is
skipped with a one-line warning naming it, and the newest intact earlier one is used; when none
is intact, :class:`CheckpointError` names the files that failed.
"""

from __future__ import annotations

import json
import logging
import random
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sdgym.cache import (
    atomic_directory,
    atomic_write_text,
    entry_problem,
    naming_full_disk,
    remove_stale_staging,
)

LATEST = "latest.json"
STATE = "state.pt"
SHARDS = "shards"
_STEP = re.compile(r"^step-(\d+)$")
log = logging.getLogger("sdgym.checkpoint")


class CheckpointError(ValueError):
    """No intact checkpoint to resume from (the message names what failed)."""


def rng_state() -> dict[str, Any]:
    """Python, NumPy and torch RNG states."""
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what :func:`rng_state` captured."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def checkpoint_folders(run_dir: str | Path) -> list[tuple[int, Path]]:
    """``(step, folder)`` of every finished checkpoint of a run, oldest first."""
    checkpoints = Path(run_dir) / "checkpoints"
    found = [(int(m[1]), p) for p in checkpoints.glob("step-*")
             if (m := _STEP.match(p.name)) and p.is_dir()]
    return sorted(found)


def _remove_staging(checkpoints: Path) -> None:
    """Staging folders of killed checkpoint writes (one writer per run folder: any without a
    live writer, also those of sdgym versions that recorded none)."""
    remove_stale_staging(checkpoints)
    for path in checkpoints.glob(".step-*"):
        if ".tmp-" not in path.name and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)


def save_checkpoint(run_dir: str | Path, step: int, state: dict[str, Any], keep: int = 2,
                    shards: Path | None = None) -> Path:
    """Write ``state`` (tensors, optimizer dicts, plain data) as checkpoint ``step``; keep the
    last ``keep`` up to ``step`` (later ones belong to a future this run replaced) and never the
    one ``latest.json`` names. ``shards``: a folder the ranks of a sharded run wrote
    (:mod:`baselines.sharding`), moved in as ``shards/`` before the manifest is written."""
    run_dir = Path(run_dir)
    checkpoints = run_dir / "checkpoints"
    checkpoints.mkdir(parents=True, exist_ok=True)
    _remove_staging(checkpoints)
    target = checkpoints / f"step-{step:06d}"
    with atomic_directory(target) as staging:
        # through a Python file: a full disk is then OSError(ENOSPC), not torch's opaque
        # RuntimeError("unexpected pos ...") of its own writer
        with naming_full_disk(target / STATE), (staging / STATE).open("wb") as handle:
            torch.save(state, handle)
        if shards is not None:
            shutil.move(str(shards), str(staging / SHARDS))
    manifest = json.loads((target / ".manifest.json").read_text())
    atomic_write_text(checkpoints / LATEST, json.dumps(
        {"step": step, "path": target.name, "sha256": manifest["files"][STATE]["sha256"]}))
    earlier = [p for s, p in checkpoint_folders(run_dir) if s < step]
    later = [p for s, p in checkpoint_folders(run_dir) if s > step]
    for old in earlier[:max(0, len(earlier) - (keep - 1))] + later:
        shutil.rmtree(old, ignore_errors=True)
    return target


def _load(folder: Path) -> dict[str, Any]:
    """The state of one checkpoint folder; raises ``ValueError`` naming the file when it is
    missing, torn or changed."""
    path = folder / STATE
    if not path.is_file():
        raise ValueError(f"{path} is missing")
    if path.stat().st_size == 0:
        raise ValueError(f"{path} is empty")
    problem = entry_problem(folder)
    if problem is not None:
        raise ValueError(f"{folder}: {problem}")
    try:
        return torch.load(path, weights_only=False)
    except Exception as error:  # torch raises several types for a torn file
        raise ValueError(f"{path} cannot be read ({type(error).__name__}: {error})") from None


def load_latest(run_dir: str | Path) -> dict[str, Any] | None:
    """The state of the newest intact checkpoint, or ``None`` when the run has none.

    ``latest.json`` names the newest; when it (or the folder it names) is damaged, earlier
    checkpoints are tried newest first, each skip logged as one warning line."""
    found = load_latest_with_folder(run_dir)
    return None if found is None else found[0]


def load_latest_with_folder(run_dir: str | Path) -> tuple[dict[str, Any], Path] | None:
    """:func:`load_latest` and the checkpoint folder it read (``None``: no checkpoint)."""
    checkpoints = Path(run_dir) / "checkpoints"
    pointer = checkpoints / LATEST
    folders = [p for _, p in reversed(checkpoint_folders(run_dir))]
    named: Path | None = None
    if pointer.exists():
        try:
            named = checkpoints / json.loads(pointer.read_text())["path"]
        except (ValueError, KeyError, TypeError):
            log.warning("checkpoint pointer %s is unreadable; using the newest intact checkpoint",
                        pointer)
    elif not folders:
        return None
    _remove_staging(checkpoints)
    candidates = ([named] if named is not None else []) + [p for p in folders if p != named]
    failures = []
    for folder in candidates:
        try:
            state = _load(folder)
        except ValueError as error:
            failures.append(str(error))
            log.warning("skipping damaged checkpoint: %s", error)
            continue
        if failures:
            log.warning("resuming from the earlier checkpoint %s", folder)
        return state, folder
    raise CheckpointError("no intact checkpoint to resume from in "
                          f"{checkpoints}: {'; '.join(failures) or 'no checkpoint folder'}")
