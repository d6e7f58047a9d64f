"""Split names with slices (sdgym.splits)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdgym.splits import parse_split


def test_a_plain_name_is_the_whole_split() -> None:
    name = parse_split("easy_train")
    assert name.base == "easy_train" and not name.sliced
    assert list(name.indices(4)) == [0, 1, 2, 3]


@given(st.integers(0, 300), st.integers(-8, 8) | st.none(), st.integers(-8, 8) | st.none(),
       st.integers(1, 5) | st.none())
def test_integer_slices_keep_what_python_slicing_keeps(count, start, stop, step) -> None:
    text = f"train[{'' if start is None else start}:{'' if stop is None else stop}" + (
        "" if step is None else f":{step}") + "]"
    assert list(parse_split(text).indices(count)) == list(range(count))[start:stop:step]


def test_halves_by_parity_are_disjoint_and_cover_the_split() -> None:
    even, odd = (set(parse_split(f"easy_train[{k}::2]").indices(600)) for k in (0, 1))
    assert not even & odd and even | odd == set(range(600)) and len(even) == len(odd) == 300


def test_percentages_round_to_the_nearest_task() -> None:
    assert list(parse_split("val[:50%]").indices(10)) == [0, 1, 2, 3, 4]
    assert list(parse_split("val[50%:]").indices(5)) == [2, 3, 4]  # round(2.5) == 2
    assert len(parse_split("val[10%:20%]").indices(240)) == 24


@pytest.mark.parametrize(("text", "message"), [
    ("train[", "bad split slice 'train\\['"),
    ("train[1]", "write split\\[start:stop\\]"),
    ("train[a:b]", "'a' is not an integer"),
    ("train[::0]", "the step must be a positive integer, got '0'"),
    ("train[::-1]", "the step must be a positive integer"),
    ("train[1:2:3:4]", "write split"),
    ("[1:2]", "bad split slice"),
])
def test_malformed_slices_are_refused_by_name(text, message) -> None:
    with pytest.raises(ValueError, match=message):
        parse_split(text)
