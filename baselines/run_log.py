"""Run logging: JSON lines always, TensorBoard when installed, Weights & Biases when asked for, and an
optional progress bar."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

METRICS_FILE = "metrics.jsonl"


class RunLog:
    """Writes ``metrics.jsonl`` (one object per step or event) in ``run_dir``."""

    def __init__(self, run_dir: Path, progress: bool = False, total: int | None = None,
                 wandb: dict[str, Any] | None = None) -> None:
        """``wandb``: ``None`` (off) or ``wandb.init`` keyword arguments (``project`` at least;
        ``mode`` defaults to ``"offline"``, so nothing leaves the machine unless asked)."""
        self.path = Path(run_dir) / METRICS_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._bar = None
        if progress:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=Path(run_dir).as_posix()[-40:], unit="step")
        self._tensorboard = None
        try:
            from torch.utils.tensorboard import SummaryWriter

            self._tensorboard = SummaryWriter(str(Path(run_dir) / "tensorboard"))
        except Exception:  # tensorboard is optional
            self._tensorboard = None
        self._wandb = None
        if wandb is not None:
            try:
                import wandb as wandb_module
            except ImportError as error:
                raise ImportError("wandb logging was requested (wandb_project) but wandb is not "
                                  "installed: pip install wandb") from error
            settings = {"mode": "offline", "dir": str(run_dir), **wandb}
            self._wandb = wandb_module.init(**settings)

    def _write(self, record: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, default=float) + "\n")

    def step(self, step: int, metrics: dict[str, Any]) -> None:
        """Log one step's metrics."""
        self._write({"step": step, "time": time.time(), **metrics})
        scalars = {key: value for key, value in metrics.items()
                   if isinstance(value, (int, float)) and math.isfinite(value)}
        if self._tensorboard is not None:
            for key, value in scalars.items():
                self._tensorboard.add_scalar(key, value, step)
        if self._wandb is not None:
            self._wandb.log(scalars, step=step)
        if self._bar is not None:
            shown = {k.split("/")[-1]: round(v, 3) for k, v in metrics.items()
                     if k in ("train/success", "train/score", "val/success", "loss")}
            self._bar.set_postfix(shown)
            self._bar.n = step
            self._bar.refresh()

    def event(self, name: str, data: dict[str, Any]) -> None:
        """Log a one-off event (e.g. the SFT warm start)."""
        self._write({"event": name, "time": time.time(), **data})

    def truncate_after(self, step: int) -> None:
        """Drop step records after ``step`` (a resumed run re-logs them)."""
        if not self.path.exists():
            return
        kept = [line for line in self.path.read_text().splitlines()
                if line and json.loads(line).get("step", -1) <= step]
        self.path.write_text("".join(line + "\n" for line in kept))

    def close(self) -> None:
        """Close the progress bar and TensorBoard writer."""
        if self._bar is not None:
            self._bar.close()
        if self._tensorboard is not None:
            self._tensorboard.close()
        if self._wandb is not None:
            self._wandb.finish()
            self._wandb = None


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """All step records of a run, in order."""
    path = Path(run_dir) / METRICS_FILE
    if not path.exists():
        return []
    return [r for r in (json.loads(line) for line in path.read_text().splitlines() if line)
            if "step" in r]
