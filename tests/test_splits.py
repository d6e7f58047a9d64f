"""Split names with slices and unions (sdgym.splits)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdgym.splits import parse_split


def test_a_plain_name_is_the_whole_split() -> None:
    name = parse_split("easy_train")
    assert name.bases == ["easy_train"]
    assert name.tasks(lambda split: 4) == [("easy_train", i) for i in range(4)]


@given(st.integers(0, 300), st.integers(-8, 8) | st.none(), st.integers(-8, 8) | st.none(),
       st.integers(1, 5) | st.none())
def test_integer_slices_keep_what_python_slicing_keeps(count, start, stop, step) -> None:
    text = f"train[{'' if start is None else start}:{'' if stop is None else stop}" + (
        "" if step is None else f":{step}") + "]"
    name = parse_split(text)
    expected = list(range(count))[start:stop:step]
    assert [index for _, index in name.tasks(lambda split: count)] == expected
    assert name.count(lambda split: count) == len(expected)
    assert [name.task(i, lambda split: count) for i in range(len(expected))] == name.tasks(
        lambda split: count)


def test_a_union_lists_its_pieces_in_order_across_splits() -> None:
    counts = {"train": 10, "val": 4}.__getitem__
    name = parse_split("train[8:] + val[:50%]+train[0:1]")
    assert name.bases == ["train", "val"]
    assert name.tasks(counts) == [("train", 8), ("train", 9), ("val", 0), ("val", 1), ("train", 0)]
    assert name.task(4, counts) == ("train", 0) and name.count(counts) == 5
    with pytest.raises(IndexError):
        name.task(5, counts)


def test_percentages_round_to_the_nearest_task_ties_to_even() -> None:
    def indices(text: str, count: int) -> list[int]:
        return [index for _, index in parse_split(text).tasks(lambda split: count)]

    assert indices("val[:50%]", 10) == [0, 1, 2, 3, 4]
    assert indices("val[50%:]", 5) == [2, 3, 4]  # round(2.5) == 2
    assert len(indices("val[10%:20%]", 240)) == 24 and indices("val[-100%:]", 3) == [0, 1, 2]


@pytest.mark.parametrize(("text", "message"), [
    ("train[", "bad split name 'train\\['"),
    ("train[1]", "write split\\[start:stop\\]"),
    ("train[a:b]", "'a' is not an integer"),
    ("train[::0]", "the step must be a positive integer, got '0'"),
    ("train[::-1]", "the step must be a positive integer"),
    ("train[::²]", "the step must be a positive integer"),
    ("train[:150%]", "'150%' is beyond 100%"),
    ("train[1:2:3:4]", "write split"),
    ("[1:2]", "bad split name"),
    ("train+", "bad split name"),
    ("  ", "non-empty string"),
])
def test_malformed_names_are_refused_by_name(text, message) -> None:
    with pytest.raises(ValueError, match=message):
        parse_split(text)
