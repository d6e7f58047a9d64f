"""Length buckets: the split minimises padded positions plus the price of extra buckets."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.backends.length_buckets import length_buckets


def _cost(lengths: list[int], buckets: list[list[int]], bucket_cost: float) -> float:
    return (sum(len(b) * max(lengths[i] for i in b) for b in buckets)
            + bucket_cost * (len(buckets) - 1))


def _brute_force(lengths: list[int], bucket_cost: float) -> float:
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    best = float("inf")
    for cuts in itertools.product([False, True], repeat=len(lengths) - 1):
        buckets, current = [], [order[0]]
        for index, cut in zip(order[1:], cuts):
            if cut:
                buckets.append(current)
                current = []
            current.append(index)
        best = min(best, _cost(lengths, buckets + [current], bucket_cost))
    return best


@given(st.lists(st.integers(1, 300), min_size=1, max_size=9), st.floats(0, 2000))
def test_split_is_optimal_and_a_partition(lengths: list[int], bucket_cost: float) -> None:
    buckets = length_buckets(lengths, bucket_cost)
    assert sorted(i for b in buckets for i in b) == list(range(len(lengths)))
    assert _cost(lengths, buckets, bucket_cost) == pytest.approx(_brute_force(lengths, bucket_cost))


def test_free_buckets_remove_padding_and_costly_ones_merge() -> None:
    lengths = [10, 200, 12, 190, 11]
    assert length_buckets(lengths, 0.0) == [[0], [4], [2], [3], [1]]
    assert length_buckets(lengths, 1e9) == [[0, 4, 2, 3, 1]]
    assert length_buckets(lengths, 100.0) == [[0, 4, 2], [3, 1]]


def test_negative_cost_is_an_error() -> None:
    with pytest.raises(ValueError, match="bucket_cost must be >= 0"):
        length_buckets([1], -1.0)
