"""Split slices: ``"easy_train[1::2]"`` is every second task of ``easy_train``, from its second.

A split name may carry a slice, as in Hugging Face ``datasets`` (``split="train[:50%]"``): the
tasks of the named split whose indices Python's ``range(count)[start:stop:step]`` keeps. Start
and stop are integers or percentages of the split (``"[:50%]"``, rounded to the nearest task);
the step is a positive integer. Task ``i`` of a slice is task ``indices[i]`` of its split, so a
slice's tasks keep their identity (task id, gold plan, generated game) and two slices of one
split with no index in common share no task. ``"easy_train[0::2]"`` and ``"easy_train[1::2]"``
cut a split in two halves of the same mix of task types (splits list their tasks type by type),
e.g. one for a warm start's demonstrations and one for RL on tasks the warm start never saw.

Example:
    >>> split = parse_split("easy_train[1::2]")
    >>> split.base, list(split.indices(7))
    ('easy_train', [1, 3, 5])
    >>> list(parse_split("val[:50%]").indices(10))
    [0, 1, 2, 3, 4]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SLICED = re.compile(r"(?P<base>[^\[\]]+)\[(?P<slice>[^\[\]]*)\]")
_BOUND = re.compile(r"-?\d+%?")


@dataclass(frozen=True)
class SplitName:
    """A split name, parsed: the split it names and the slice of it (``None``: all of it)."""

    base: str
    start: str | None = None
    stop: str | None = None
    step: int | None = None
    sliced: bool = False

    def indices(self, count: int) -> range:
        """Indices in the base split (of ``count`` tasks) of this name's tasks, in order."""
        if not self.sliced:
            return range(count)
        return range(count)[slice(_bound(self.start, count), _bound(self.stop, count), self.step)]


def _bound(text: str | None, count: int) -> int | None:
    if text is None:
        return None
    if text.endswith("%"):
        return int(round(int(text[:-1]) * count / 100))
    return int(text)


def parse_split(name: str) -> SplitName:
    """Parse ``"split"`` or ``"split[start:stop:step]"``; a ValueError names what is wrong."""
    if not isinstance(name, str):
        raise ValueError(f"a split name must be a string, got {name!r}")
    if "[" not in name and "]" not in name:
        return SplitName(name)
    match = _SLICED.fullmatch(name)
    parts = match.group("slice").split(":") if match else []
    if not match or not 2 <= len(parts) <= 3:
        raise ValueError(f"bad split slice {name!r}: write split[start:stop] or "
                         "split[start:stop:step], e.g. 'easy_train[1::2]' or 'train[:50%]'")
    start, stop, *step = (part.strip() or None for part in parts)
    for bound in (start, stop):
        if bound is not None and not _BOUND.fullmatch(bound):
            raise ValueError(f"bad split slice {name!r}: {bound!r} is not an integer or a "
                             "percentage such as '50%'")
    step_text = step[0] if step else None
    if step_text is not None and (not step_text.isdigit() or int(step_text) < 1):
        raise ValueError(f"bad split slice {name!r}: the step must be a positive integer, "
                         f"got {step_text!r}")
    return SplitName(match.group("base").strip(), start, stop,
                     int(step_text) if step_text is not None else None, sliced=True)
