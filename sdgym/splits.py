"""Split names with slices and unions, as Hugging Face ``datasets`` writes them.

A split name may slice a split, ``"val[:50%]"``, or join pieces with ``+``,
``"easy_train[0:75]+easy_train[150:225]"``. A slice keeps the tasks whose indices Python's
``range(count)[start:stop:step]`` keeps; start and stop are integers or percentages of the split
(``-100%`` to ``100%``, rounded to the nearest task, ties to even as Python's ``round``), the step
a positive integer. The tasks of a name are those of its pieces, in order. Each task keeps its
identity (task id, gold plan, generated game): task ``i`` of a name is task ``j`` of a split the
env has, so pieces that share no index share no task.

Which pieces make two disjoint halves of the same mix depends on how the env orders its tasks:
ScienceWorld lists each task's variations in order and the box colour of a find task is its
variation modulo 6, so ``easy_train[0::2]`` has three of the six colours; the first and second 75
variations of each find task (``easy_train[0:75]+easy_train[150:225]+...``) have all six.

Example:
    >>> name = parse_split("easy_train[1::2]+val[:2]")
    >>> name.tasks({"easy_train": 7, "val": 10}.__getitem__)
    [('easy_train', 1), ('easy_train', 3), ('easy_train', 5), ('val', 0), ('val', 1)]
    >>> parse_split("val[50%:]").tasks(lambda split: 5)
    [('val', 2), ('val', 3), ('val', 4)]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

_PIECE = re.compile(r"(?P<base>[^\[\]+]+?)\s*(?:\[(?P<slice>[^\[\]]*)\])?", re.ASCII)
_BOUND = re.compile(r"-?\d+%?", re.ASCII)
_STEP = re.compile(r"\d+", re.ASCII)
_EXAMPLES = "e.g. 'val[:50%]', 'easy_train[1::2]' or 'easy_train[0:75]+easy_train[150:225]'"


@dataclass(frozen=True)
class SplitPiece:
    """One piece of a split name: a split the env has and the slice of it (``None``: all)."""

    base: str
    start: str | None = None
    stop: str | None = None
    step: int | None = None

    def indices(self, count: int) -> range:
        """Indices in :attr:`base` (of ``count`` tasks) of this piece's tasks, in order."""
        return range(count)[slice(_bound(self.start, count), _bound(self.stop, count), self.step)]


@dataclass(frozen=True)
class SplitName:
    """A parsed split name: its pieces, in order."""

    pieces: tuple[SplitPiece, ...]

    @property
    def bases(self) -> list[str]:
        """The splits the pieces are cut from, each once, in order."""
        return list(dict.fromkeys(piece.base for piece in self.pieces))

    def count(self, count_of: Callable[[str], int]) -> int:
        """Number of tasks of this name; ``count_of(split)`` gives the number of tasks of a
        split the env has."""
        return sum(len(piece.indices(count_of(piece.base))) for piece in self.pieces)

    def task(self, index: int, count_of: Callable[[str], int]) -> tuple[str, int]:
        """``(split, index in that split)`` of task ``index`` of this name (``0 <= index <
        count``), without listing the others."""
        for piece in self.pieces:
            indices = piece.indices(count_of(piece.base))
            if index < len(indices):
                return piece.base, indices[index]
            index -= len(indices)
        raise IndexError("task index beyond the split's tasks")

    def tasks(self, count_of: Callable[[str], int]) -> list[tuple[str, int]]:
        """``(split, index in that split)`` of every task of this name, in order."""
        return [(piece.base, index) for piece in self.pieces
                for index in piece.indices(count_of(piece.base))]


def _bound(text: str | None, count: int) -> int | None:
    if text is None:
        return None
    if text.endswith("%"):
        return int(round(int(text[:-1]) * count / 100))
    return int(text)


def _piece(name: str, text: str) -> SplitPiece:
    match = _PIECE.fullmatch(text.strip())
    if not match or not match.group("base").strip():
        raise ValueError(f"bad split name {name!r}: write split, split[start:stop:step] or "
                         f"pieces joined by '+', {_EXAMPLES}")
    base, sliced = match.group("base").strip(), match.group("slice")
    if sliced is None:
        return SplitPiece(base)
    parts = [part.strip() or None for part in sliced.split(":")]
    if not 2 <= len(parts) <= 3:
        raise ValueError(f"bad split slice {name!r}: write split[start:stop] or "
                         f"split[start:stop:step], {_EXAMPLES}")
    start, stop, *step = parts
    for bound in (start, stop):
        if bound is None:
            continue
        if not _BOUND.fullmatch(bound):
            raise ValueError(f"bad split slice {name!r}: {bound!r} is not an integer or a "
                             "percentage such as '50%'")
        if bound.endswith("%") and abs(int(bound[:-1])) > 100:
            raise ValueError(f"bad split slice {name!r}: {bound!r} is beyond 100%")
    step_text = step[0] if step else None
    if step_text is not None and (not _STEP.fullmatch(step_text) or int(step_text) < 1):
        raise ValueError(f"bad split slice {name!r}: the step must be a positive integer, "
                         f"got {step_text!r}")
    return SplitPiece(base, start, stop, int(step_text) if step_text is not None else None)


def parse_split(name: str) -> SplitName:
    """Parse a split name (see the module docstring); a ValueError names what is wrong. Parsed
    once per name (every reset asks)."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a split name must be a non-empty string, got {name!r}")
    return _parsed(name)


@lru_cache(maxsize=256)
def _parsed(name: str) -> SplitName:
    return SplitName(tuple(_piece(name, text) for text in name.split("+")))
