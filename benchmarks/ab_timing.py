"""A/B timing inside one process, the way the project compares speeds.

Both sides are warmed up first (JIT, imports, caches the side keeps in normal use), then rounds
alternate which side runs first, and each round gives one ratio (anchor seconds / candidate
seconds). :meth:`ABResult.summary` reports the median and min–max of those ratios beside each
side's median seconds. A side is a callable that does one unit of work and returns the seconds
it took (so per-round set-up can stay outside the timing).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class ABResult:
    """Seconds per round of the candidate and of the anchor (same rounds, alternating order)."""

    candidate: list[float] = field(default_factory=list)
    anchor: list[float] = field(default_factory=list)

    @property
    def ratios(self) -> list[float]:
        """Per round: how many times faster the candidate ran than the anchor."""
        return [slow / fast for fast, slow in zip(self.candidate, self.anchor)]

    @property
    def median(self) -> float:
        return statistics.median(self.ratios)

    def summary(self, name: str) -> dict[str, float]:
        """``{name}_median``/``_min``/``_max`` ratios and both sides' median seconds."""
        ratios = self.ratios
        return {
            f"{name}_median": round(statistics.median(ratios), 3),
            f"{name}_min": round(min(ratios), 3),
            f"{name}_max": round(max(ratios), 3),
            f"{name}_candidate_median_s": round(statistics.median(self.candidate), 6),
            f"{name}_anchor_median_s": round(statistics.median(self.anchor), 6),
            f"{name}_rounds": len(ratios),
        }


def alternate(candidate: Callable[[], float], anchor: Callable[[], float], *, rounds: int,
              warmup: int = 1) -> ABResult:
    """Warm both sides ``warmup`` times, then ``rounds`` rounds, the first side alternating."""
    if rounds < 1 or warmup < 0:
        raise ValueError(f"rounds must be >= 1 and warmup >= 0, got {rounds} and {warmup}")
    for _ in range(warmup):
        candidate(), anchor()
    result = ABResult()
    for round_ in range(rounds):
        if round_ % 2 == 0:
            result.candidate.append(candidate())
            result.anchor.append(anchor())
        else:
            result.anchor.append(anchor())
            result.candidate.append(candidate())
    return result
