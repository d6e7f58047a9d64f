"""Cost accounting: wall time per training phase, per step and in total, plus token counts."""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Iterator

PHASES: tuple[str, ...] = (
    "generation", "env", "teacher_forward", "reference_forward", "update", "weight_sync",
    "validation", "checkpoint",
)
"""The phases every run times (DESIGN.md §3)."""


class PhaseTimer:
    """Accumulates seconds per phase for the current step and for the whole run."""

    def __init__(self) -> None:
        self.step: dict[str, float] = defaultdict(float)
        self.total: dict[str, float] = defaultdict(float)
        self.tokens: dict[str, int] = defaultdict(int)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the ``with`` block as phase ``name``."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - started)

    def add(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to phase ``name``."""
        self.step[name] += seconds
        self.total[name] += seconds

    def count_tokens(self, kind: str, count: int) -> None:
        """Add ``count`` tokens of ``kind`` (generated, trained, teacher, reference)."""
        self.tokens[kind] += int(count)

    def end_step(self) -> dict[str, float]:
        """This step's phase times (every phase present, zeros included); resets the step."""
        times = {name: round(self.step.get(name, 0.0), 6) for name in PHASES}
        self.step = defaultdict(float)
        return times

    def state_dict(self) -> dict[str, dict]:
        """Totals, for checkpoints."""
        return {"total": dict(self.total), "tokens": dict(self.tokens)}

    def load_state_dict(self, state: dict[str, dict]) -> None:
        """Restore totals from a checkpoint."""
        self.total = defaultdict(float, state.get("total", {}))
        self.tokens = defaultdict(int, state.get("tokens", {}))
