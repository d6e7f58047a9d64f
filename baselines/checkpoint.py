"""Checkpoints that resume exactly: model, optimizer, RNG states, step and data position.

A checkpoint is a folder ``step-<n>`` written to a temporary sibling and renamed into place, and
``latest`` is a small JSON file replaced atomically (``os.replace``) after the folder exists, so
a kill at any moment leaves the previous complete checkpoint as the latest one.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sdgym.cache import atomic_directory, atomic_write_text

LATEST = "latest.json"


def rng_state() -> dict[str, Any]:
    """Python, NumPy and torch RNG states."""
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what :func:`rng_state` captured."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def save_checkpoint(run_dir: str | Path, step: int, state: dict[str, Any], keep: int = 2) -> Path:
    """Write ``state`` (tensors, optimizer dicts, plain data) as checkpoint ``step``; keep the last ``keep``."""
    run_dir = Path(run_dir)
    checkpoints = run_dir / "checkpoints"
    checkpoints.mkdir(parents=True, exist_ok=True)
    target = checkpoints / f"step-{step:06d}"
    with atomic_directory(target) as staging:
        torch.save(state, staging / "state.pt")
    atomic_write_text(checkpoints / LATEST, json.dumps({"step": step, "path": target.name}))
    finished = sorted(p for p in checkpoints.glob("step-*") if p.is_dir())
    for old in finished[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return target


def load_latest(run_dir: str | Path) -> dict[str, Any] | None:
    """The latest complete checkpoint's state, or ``None`` when the run has none."""
    checkpoints = Path(run_dir) / "checkpoints"
    pointer = checkpoints / LATEST
    if not pointer.exists():
        return None
    target = checkpoints / json.loads(pointer.read_text())["path"]
    return torch.load(target / "state.pt", weights_only=False)
