"""ScienceWorld's 30 tasks, their variations, and the upstream train/dev/test splits.

The simulator splits the variations of every task 50/25/25 into train, dev and test
(``PythonInterface.getSets`` in the Scala source). :func:`upstream_splits` reimplements that rule
exactly, so the catalogue needs no JVM: ``task_count`` and task choice are pure Python. The variation
counts below are those of ``scienceworld==1.2.3`` (7,207 variations in all); a test checks them,
and the splits, against the simulator.

sdgym names the splits ``train``/``val``/``test`` (upstream ``dev`` is ``val``). Task index ``i`` of
a split enumerates ``(task, variation)`` pairs task-major: tasks in the simulator's order, then
variations in increasing order.

The easy curriculum ``easy_train``/``easy_val``/``easy_test`` keeps, of ``train``/``val``/``test``,
the variations of the four *find* tasks (:data:`EASY_TASKS`: find an animal, a living thing, a
non-living thing or a plant, focus on it and move it to a box): their gold paths are 3-16
actions, where the other tasks need 20-100, and under ``teleportAction`` (``"easy"``) the
expert teleports instead of walking, 5.4 actions on average, at most 6 (220 tasks of the three
easy splits, measured 2026-12-04). Being subsets of the upstream splits, they share no
variation with each other.

Example:
    >>> catalog = TaskCatalog(["boil", "melt"])
    >>> catalog.count("val"), catalog.pair("val", 0)
    (14, ('boil', 14))
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence

TASK_VARIATIONS: dict[str, int] = {
    "boil": 30,
    "change-the-state-of-matter-of": 30,
    "chemistry-mix": 32,
    "chemistry-mix-paint-secondary-color": 36,
    "chemistry-mix-paint-tertiary-color": 36,
    "find-animal": 300,
    "find-living-thing": 300,
    "find-non-living-thing": 300,
    "find-plant": 300,
    "freeze": 30,
    "grow-fruit": 126,
    "grow-plant": 126,
    "identify-life-stages-1": 14,
    "identify-life-stages-2": 10,
    "inclined-plane-determine-angle": 168,
    "inclined-plane-friction-named-surfaces": 1386,
    "inclined-plane-friction-unnamed-surfaces": 162,
    "lifespan-longest-lived": 125,
    "lifespan-longest-lived-then-shortest-lived": 125,
    "lifespan-shortest-lived": 125,
    "measure-melting-point-known-substance": 436,
    "measure-melting-point-unknown-substance": 300,
    "melt": 30,
    "mendelian-genetics-known-plant": 120,
    "mendelian-genetics-unknown-plant": 480,
    "power-component": 20,
    "power-component-renewable-vs-nonrenewable-energy": 20,
    "test-conductivity": 900,
    "test-conductivity-of-unknown-substances": 600,
    "use-thermometer": 540,
}
"""Number of variations of each task, in the simulator's task order."""

TASK_NAMES: tuple[str, ...] = tuple(TASK_VARIATIONS)

SPLIT_TO_UPSTREAM: dict[str, str] = {"train": "train", "val": "dev", "test": "test"}
"""sdgym split name -> upstream split name."""

EASY_TASKS: tuple[str, ...] = ("find-animal", "find-living-thing", "find-non-living-thing",
                               "find-plant")
"""Tasks of the easy curriculum splits (the shortest gold paths: 3-16 actions)."""

EASY_SPLITS: dict[str, str] = {"easy_train": "train", "easy_val": "val", "easy_test": "test"}
"""Each easy split and the sdgym split it is cut from (also the role it plays)."""

SPLITS: tuple[str, ...] = (*SPLIT_TO_UPSTREAM, *EASY_SPLITS)

SIMPLIFICATIONS: tuple[str, ...] = (
    "teleportAction",
    "selfWateringFlowerPots",
    "openContainers",
    "openDoors",
    "noElectricalAction",
)
"""Upstream simplifications; ``"easy"`` alone means teleport, open doors, self-watering pots and
(except on electrical tasks) no electrical actions."""


def upstream_splits(num_variations: int) -> dict[str, list[int]]:
    """Variation indices of each upstream split (``train``/``dev``/``test``), as the simulator does."""
    n = num_variations
    special = {
        0: ([], [], []),
        1: ([0], [], [0]),
        2: ([0], [], [1]),
        3: ([0], [1], [2]),
        4: ([0, 1], [2], [3]),
    }
    if n in special:
        train, dev, test = special[n]
    else:
        size = n // 4
        groups = [list(range(start, min(start + size, n))) for start in range(0, n, size)]
        train, dev, test = groups[0] + groups[1], groups[2], groups[3]
        if len(groups) > 4:
            test = test + groups[4]
    return {"train": train, "dev": dev, "test": test}


def resolve_task_name(name: str) -> str:
    """Canonical task name for ``name`` (a task name, an id like ``"1-1"`` or ``"task-1-boil"``)."""
    from scienceworld.constants import ID2TASK, NAME2ID

    key = name.strip()
    key = NAME2ID.get(key, key)
    key = ID2TASK.get(key, key)
    key = key.replace("mendellian", "mendelian")
    key = re.sub(r"task-(\d|a|b)+-|[()]", "", key)
    if key not in TASK_VARIATIONS:
        raise ValueError(f"unknown ScienceWorld task {name!r}; tasks are {list(TASK_NAMES)}")
    return key


def is_electrical(task_name: str) -> bool:
    """Whether the task needs electrical actions (upstream never removes them there)."""
    return "power-component" in task_name or "conductivity" in task_name


def simplification_string(simplifications: str | Sequence[str] | None) -> str:
    """Validated upstream ``simplificationStr`` from ``"easy"``, a comma string or a list."""
    if simplifications is None:
        return ""
    if isinstance(simplifications, str):
        names = [part.strip() for part in simplifications.split(",") if part.strip()]
    else:
        names = [str(part).strip() for part in simplifications if str(part).strip()]
    if names == ["easy"]:
        return "easy"
    for name in names:
        if name == "easy":
            raise ValueError('"easy" cannot be combined with other simplifications')
        if name not in SIMPLIFICATIONS:
            raise ValueError(
                f"unknown simplification {name!r}; use 'easy' or some of {list(SIMPLIFICATIONS)}"
            )
    return ",".join(name for name in SIMPLIFICATIONS if name in names)


def task_simplification_string(simplifications: str, task_name: str) -> str:
    """``simplifications`` for one task: electrical tasks drop ``noElectricalAction`` (as "easy")."""
    if simplifications == "easy" or not is_electrical(task_name):
        return simplifications
    return ",".join(name for name in simplifications.split(",") if name != "noElectricalAction")


def teleports(simplifications: str) -> bool:
    """Whether ``simplifications`` (``"easy"`` or a comma-separated list) lets the agent teleport."""
    return simplifications == "easy" or "teleportAction" in simplifications.split(",")


class TaskCatalog:
    """The ``(task, variation)`` pairs of each split, for a subset of tasks.

    Args:
        task_names: tasks to include (any form :func:`resolve_task_name` accepts); ``None`` for all
            30. They are kept in the simulator's order whatever order they are given in.
    """

    def __init__(self, task_names: Iterable[str] | None = None) -> None:
        if task_names is None:
            chosen = set(TASK_NAMES)
        else:
            if isinstance(task_names, str):
                task_names = [task_names]
            chosen = {resolve_task_name(name) for name in task_names}
            if not chosen:
                raise ValueError("task_names is empty")
        self.task_names: tuple[str, ...] = tuple(name for name in TASK_NAMES if name in chosen)
        self._variations: dict[str, list[list[int]]] = {}
        self._offsets: dict[str, list[int]] = {}
        for split in SPLITS:
            source = EASY_SPLITS.get(split, split)
            lists = [upstream_splits(TASK_VARIATIONS[name])[SPLIT_TO_UPSTREAM[source]]
                     if source == split or name in EASY_TASKS else []
                     for name in self.task_names]
            offsets = [0]
            for variations in lists:
                offsets.append(offsets[-1] + len(variations))
            self._variations[split] = lists
            self._offsets[split] = offsets

    def count(self, split: str) -> int:
        """Number of ``(task, variation)`` pairs in ``split``."""
        return self._offsets[_known(split)][-1]

    def pair(self, split: str, index: int) -> tuple[str, int]:
        """The ``(task name, variation)`` at ``index`` of ``split``."""
        offsets = self._offsets[_known(split)]
        if not 0 <= index < offsets[-1]:
            raise IndexError(f"task index {index} out of range [0, {offsets[-1]}) for {split!r}")
        task = bisect.bisect_right(offsets, index) - 1
        return self.task_names[task], self._variations[split][task][index - offsets[task]]

    def index(self, split: str, task_name: str, variation: int | None = None) -> int:
        """Index in ``split`` of ``task_name`` (its first variation there if ``variation`` is None)."""
        name = resolve_task_name(task_name)
        if name not in self.task_names:
            raise ValueError(f"task {name!r} is not in this env's task_names")
        task = self.task_names.index(name)
        variations = self._variations[_known(split)][task]
        if variation is None:
            if not variations:
                raise ValueError(f"task {name!r} has no variations in split {split!r}")
            return self._offsets[split][task]
        if variation not in variations:
            raise ValueError(f"variation {variation} of {name!r} is not in split {split!r}")
        return self._offsets[split][task] + variations.index(variation)

    def variations(self, split: str, task_name: str) -> list[int]:
        """Variations of ``task_name`` in ``split``."""
        name = resolve_task_name(task_name)
        return list(self._variations[_known(split)][self.task_names.index(name)])


def _known(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"unknown ScienceWorld split {split!r}; use one of {list(SPLITS)}")
    return split
