"""Run logging: JSON lines always, TensorBoard when installed, Weights & Biases when asked for, and an
optional progress bar.

``metrics.jsonl`` keeps the trainer's own keys. TensorBoard and W&B get every finite scalar under
one of six tag groups (:func:`scalar_tags`): ``train/`` (rollout outcomes, loss terms, gradient
norm), ``val/`` (validation), ``test/`` (the final test panel, at the last step), ``timing/``
(per-phase wall and CPU seconds), ``cost/`` (token counts) and ``head/`` (the teacher head's own
numbers, its teacher statistics included). A ``timing/`` or ``cost/`` curve that has been 0 at
every step so far is not written (GRPO has no teacher forward: no flat zero line for it).
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from sdgym.cache import append_whole, atomic_write_text

METRICS_FILE = "metrics.jsonl"

TAG_GROUPS: tuple[str, ...] = ("train", "val", "test", "timing", "cost", "head")
"""The tag groups every logged scalar falls under."""

COST_GROUPS: dict[str, str] = {
    "phase_seconds": "timing/wall_seconds", "phase_cpu_seconds": "timing/cpu_seconds",
    "tokens": "cost/tokens"}
"""Nested cost records of a step → their tag prefix."""

SKIP_WHILE_ZERO: tuple[str, ...] = ("timing/", "cost/")
"""Tag prefixes whose curves start only once they are non-zero."""

_NOTICES: set[str] = set()


def duration(seconds: float) -> str:
    """``1h10m``, ``14m02s`` or ``9s``."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def progress_line(step: int, total: int | None, elapsed: float, metrics: dict[str, Any]) -> str:
    """``step 3/8  elapsed 1m02s  ETA 1m43s  train/success 0.250 ...``: one training step for a
    log that is not a terminal (the ETA assumes the steps so far are typical)."""
    eta = (f"ETA {duration(elapsed / step * (total - step))}" if total and step < total
           else "done")
    shown = "  ".join(f"{key} {float(value):.3f}" for key, value in metrics.items()
                      if key in ("train/success", "val/success", "loss") and _finite(value))
    return f"step {step}/{total or '?'}  elapsed {duration(elapsed)}  {eta}  {shown}".rstrip()


def notice_once(text: str) -> None:
    """Print ``text`` to stderr once per process (a missing optional logger, say)."""
    if text not in _NOTICES:
        _NOTICES.add(text)
        print(text, file=sys.stderr, flush=True)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def scalar_tags(metrics: dict[str, Any]) -> dict[str, float]:
    """A step's metrics as ``{tag: value}``, every tag in one of :data:`TAG_GROUPS`.

    ``phase_seconds`` / ``phase_cpu_seconds`` / ``tokens`` (dicts) become
    ``timing/wall_seconds/<phase>``, ``timing/cpu_seconds/<phase>``, ``cost/tokens/<kind>``; ``teacher/x`` becomes
    ``head/teacher/x``; keys without a group (``loss``, ``kl``, ``grad_norm``, …) go under
    ``train/``. Non-finite and non-numeric values are left out.
    """
    tags: dict[str, float] = {}
    for key, value in metrics.items():
        if key in COST_GROUPS and isinstance(value, dict):
            for name, number in value.items():
                if _finite(number):
                    tags[f"{COST_GROUPS[key]}/{name}"] = float(number)
            continue
        if not _finite(value):
            continue
        group = key.split("/", 1)[0] if "/" in key else None
        if group == "teacher":
            tag = f"head/{key}"
        elif group in TAG_GROUPS:
            tag = key
        else:
            tag = f"train/{key}"
        tags[tag] = float(value)
    return tags


class RunLog:
    """Writes ``metrics.jsonl`` (one object per step or event) in ``run_dir``."""

    def __init__(self, run_dir: Path, progress: bool = False, total: int | None = None,
                 wandb: dict[str, Any] | None = None, tensorboard: bool = True) -> None:
        """``wandb``: ``None`` (off) or ``wandb.init`` keyword arguments (``project`` at least;
        ``mode`` defaults to ``"offline"``, so nothing leaves the machine unless asked).
        ``tensorboard``: write event files under ``run_dir/tensorboard`` (a one-line notice on
        stderr, once per process, where the ``tensorboard`` package is missing)."""
        self.path = Path(run_dir) / METRICS_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._bar = None
        self._lines = None  # (started, total): a plain progress line per step
        if progress and sys.stderr.isatty():
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=Path(run_dir).as_posix()[-40:], unit="step")
        elif progress:  # a log file: whole lines with done/total, elapsed and ETA, no \r bars
            self._lines = (time.monotonic(), total)
        self._tensorboard = self._tensorboard_writer(Path(run_dir)) if tensorboard else None
        self._nonzero: set[str] = set()  # timing/cost tags that have been non-zero
        self._wandb = None
        if wandb is not None:
            try:
                import wandb as wandb_module
            except ImportError as error:
                raise ImportError("wandb logging was requested (wandb_project) but wandb is not "
                                  "installed: pip install wandb") from error
            settings = {"mode": "offline", "dir": str(run_dir), **wandb}
            self._wandb = wandb_module.init(**settings)

    @staticmethod
    def _tensorboard_writer(run_dir: Path):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as error:  # tensorboard is optional: say so, once
            notice_once(f"note: TensorBoard logging is off ({error}); "
                        "pip install tensorboard (or 'sdgym[train]') to get event files")
            return None
        return SummaryWriter(str(run_dir / "tensorboard"))

    def _write(self, record: dict[str, Any]) -> None:
        append_whole(self.path, (json.dumps(record, default=float) + "\n").encode("utf-8"))

    def step(self, step: int, metrics: dict[str, Any]) -> None:
        """Log one step's metrics."""
        self._write({"step": step, "time": time.time(), **metrics})
        self._scalars(step, scalar_tags(metrics))
        if self._bar is not None:
            shown = {k.split("/")[-1]: round(v, 3) for k, v in metrics.items()
                     if k in ("train/success", "train/score", "val/success", "loss")}
            self._bar.set_postfix(shown)
            self._bar.n = step
            self._bar.refresh()
        if self._lines is not None and step > 0:
            print(progress_line(step, self._lines[1], time.monotonic() - self._lines[0], metrics),
                  file=sys.stderr, flush=True)

    def _scalars(self, step: int, scalars: dict[str, float]) -> None:
        """Send ``scalars`` to TensorBoard / W&B, leaving out still-zero timing/cost curves."""
        for key, value in scalars.items():
            if value != 0.0 and key.startswith(SKIP_WHILE_ZERO):
                self._nonzero.add(key)
        scalars = {key: value for key, value in scalars.items()
                   if not key.startswith(SKIP_WHILE_ZERO) or key in self._nonzero}
        if self._tensorboard is not None:
            for key, value in scalars.items():
                self._tensorboard.add_scalar(key, value, step)
            self._tensorboard.flush()
        if self._wandb is not None:
            self._wandb.log(scalars, step=step)

    def final(self, step: int, metrics: dict[str, float], **data: Any) -> None:
        """Log the final test numbers (``test/...``) at ``step``: an ``event: "test"`` record in
        ``metrics.jsonl`` (not a step record) and the scalars in TensorBoard / W&B."""
        self.event("test", {"after_step": step, **metrics, **data})
        self._scalars(step, {key: float(value) for key, value in metrics.items()
                             if _finite(value)})

    def event(self, name: str, data: dict[str, Any]) -> None:
        """Log a one-off event (e.g. the SFT warm start)."""
        self._write({"event": name, "time": time.time(), **data})

    def truncate_after(self, step: int) -> None:
        """Drop step records after ``step`` (a resumed run re-logs them)."""
        if not self.path.exists():
            return
        kept = [line for line in self.path.read_text().splitlines()
                if line and json.loads(line).get("step", -1) <= step]
        atomic_write_text(self.path, "".join(line + "\n" for line in kept))

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
