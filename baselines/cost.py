"""Cost accounting per training phase: wall seconds, process CPU seconds, token counts, FLOPs.

Wall time follows machine load; on a shared CPU machine it is noise for comparing methods.
Process CPU seconds (``time.process_time``: every thread of this process, not child processes
such as async env workers, a JVM or Ray actors) barely move with load for compute-bound work, so
they are the load-robust measure the benchmark compares on CPU. Token counts are exact, and
:func:`flops_estimate` turns them into the usual ``2·N`` (forward) / ``6·N`` (forward + backward)
FLOPs per token of an ``N``-parameter model.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Iterator

PHASES: tuple[str, ...] = (
    "generation", "env", "teacher_forward", "reference_forward", "update", "weight_sync",
    "validation", "checkpoint", "test",
)
"""The phases every run times (DESIGN.md §3)."""
NOT_TRAINING_PHASES: tuple[str, ...] = ("setup", "sft", "validation", "test")
"""Timed too, but not training cost: loading the model and envs, building the SFT warm start,
validation (the protocol's measurement, the teacher acting included) and the final test."""

FORWARD_TOKEN_KINDS: tuple[str, ...] = (
    "generation_context", "old_context", "teacher_context", "reference_context")
"""Token counts (prompt + response) of no-grad forward passes: 2·N FLOPs each."""
TRAINED_TOKEN_KIND = "trained_context"
"""Tokens (prompt + response) of forward+backward passes: 6·N FLOPs each."""


class PhaseTimer:
    """Accumulates wall and CPU seconds per phase, per step and for the whole run, and tokens."""

    def __init__(self) -> None:
        self.step: dict[str, float] = defaultdict(float)
        self.total: dict[str, float] = defaultdict(float)
        self.cpu_step: dict[str, float] = defaultdict(float)
        self.cpu_total: dict[str, float] = defaultdict(float)
        self.last_step_cpu: dict[str, float] = {}
        """The CPU seconds per phase of the step :meth:`end_step` closed last."""
        self.tokens: dict[str, int] = defaultdict(int)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the ``with`` block as phase ``name`` (wall and process CPU)."""
        started, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - started, time.process_time() - cpu)

    def add(self, name: str, seconds: float, cpu_seconds: float = 0.0) -> None:
        """Add ``seconds`` wall and ``cpu_seconds`` CPU to phase ``name``."""
        self.step[name] += seconds
        self.total[name] += seconds
        self.cpu_step[name] += cpu_seconds
        self.cpu_total[name] += cpu_seconds

    def count_tokens(self, kind: str, count: int) -> None:
        """Add ``count`` tokens of ``kind`` (generated, trained, teacher, reference, …)."""
        self.tokens[kind] += int(count)

    def end_step(self) -> dict[str, float]:
        """This step's wall seconds per phase (every phase present, zeros included); keeps its
        CPU seconds in :attr:`last_step_cpu`; resets the step."""
        times = {name: round(self.step.get(name, 0.0), 6) for name in PHASES}
        self.last_step_cpu = {name: round(self.cpu_step.get(name, 0.0), 6) for name in PHASES}
        self.step = defaultdict(float)
        self.cpu_step = defaultdict(float)
        return times

    def state_dict(self) -> dict[str, dict]:
        """Totals, for checkpoints."""
        return {"total": dict(self.total), "cpu_total": dict(self.cpu_total),
                "tokens": dict(self.tokens)}

    def load_state_dict(self, state: dict[str, dict]) -> None:
        """Restore totals from a checkpoint."""
        self.total = defaultdict(float, state.get("total", {}))
        self.cpu_total = defaultdict(float, state.get("cpu_total", {}))
        self.tokens = defaultdict(int, state.get("tokens", {}))


def flops_estimate(parameters: int, tokens: dict[str, int]) -> float:
    """``2·N`` FLOPs per forward token and ``6·N`` per trained token (prompt tokens included)."""
    forward = sum(tokens.get(kind, 0) for kind in FORWARD_TOKEN_KINDS)
    return 2.0 * parameters * forward + 6.0 * parameters * tokens.get(TRAINED_TOKEN_KIND, 0)
