"""Split a batch of prompts into length buckets so that padding costs less than extra calls.

A left-padded prefill computes ``rows × longest`` positions; splitting the rows, sorted by
length, into buckets computes ``Σ rows_b × longest_b`` instead, at the price of one more forward
per decode step for each extra bucket. :func:`length_buckets` picks the split that minimises
``padded positions + bucket_cost × buckets`` exactly (dynamic programming over the sorted
lengths), where ``bucket_cost`` is an extra bucket's price in prompt positions.
"""

from __future__ import annotations

from collections.abc import Sequence


def length_buckets(lengths: Sequence[int], bucket_cost: float) -> list[list[int]]:
    """Indices of ``lengths`` grouped into buckets (each sorted by length, buckets shortest
    first) minimising ``Σ len(bucket) × max length in it + bucket_cost × (buckets − 1)``."""
    if bucket_cost < 0:
        raise ValueError(f"bucket_cost must be >= 0, got {bucket_cost}")
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    n = len(order)
    best = [0.0] + [float("inf")] * n  # best[j]: cost of bucketing order[:j]
    cut = [0] * (n + 1)
    for end in range(1, n + 1):
        longest = lengths[order[end - 1]]
        for start in range(end):
            cost = best[start] + (end - start) * longest + (bucket_cost if start else 0.0)
            if cost < best[end]:
                best[end], cut[end] = cost, start
    buckets, end = [], n
    while end > 0:
        buckets.append(order[cut[end]:end])
        end = cut[end]
    return buckets[::-1]
