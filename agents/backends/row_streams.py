"""Per-row sampling streams: each row of a batch samples from its own seed, whatever the batch.

With one generator per call (``SamplingParams.seed``), the token a row draws depends on the other
rows of the call and on their order, so batching two evaluations together (two rollout seeds of a
test panel) would change every sample. A **row stream** removes that dependence: row ``r`` draws
its ``k``-th token with the uniform ``u = uniforms([seed_r], k)``, a counter-based hash of
``(seed_r, k)`` only, and turns it into a token by inverse-CDF sampling. Batches, chunks and
orders of rows then give the same tokens (vLLM's per-request seeds have the same property).

The hash is SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number
generators", OOPSLA 2014), whose outputs over a counter pass BigCrush; it runs in NumPy's
``uint64`` arithmetic, where wrap-around is defined.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, elementwise on ``uint64`` (wrap-around is defined there)."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def stream_seed(*parts: int) -> int:
    """One 64-bit seed from integer parts (e.g. a sampling seed, an episode slot, a turn);
    different parts give unrelated streams."""
    state = 0
    for part in parts:
        state = int(_mix(np.uint64((state + _GOLDEN + (int(part) & _MASK)) & _MASK)))
    return state


def uniforms(row_seeds: Sequence[int] | np.ndarray, step: int) -> np.ndarray:
    """``u[r] ∈ [0, 1)`` of draw ``step`` of each row's stream (float64, 53 random bits)."""
    with np.errstate(over="ignore"):
        z = np.asarray(row_seeds, dtype=np.uint64) * np.uint64(_GOLDEN) + np.uint64(
            (int(step) * _GOLDEN + 1) & _MASK)
    return (_mix(z) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
