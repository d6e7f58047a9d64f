"""Plain-Python probability helpers for hand-computed head tests (no torch)."""

from __future__ import annotations

import math


def softmax(z: list[float]) -> list[float]:
    e = [math.exp(x) for x in z]
    return [x / sum(e) for x in e]


def kl(p: list[float], q: list[float]) -> float:
    """KL(p‖q) in nats (terms with p = 0 are 0)."""
    return sum(a * math.log(a / b) for a, b in zip(p, q, strict=True) if a > 0)
