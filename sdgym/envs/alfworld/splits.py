"""Fixed ALFWorld splits over the wheel's floor plans: which task each ``(split, index)`` is.

========================  ======  ==================================================
split (aliases)           tasks   floor plans and rooms
========================  ======  ==================================================
``train``                 3600    the 108 seen floor plans, full rooms
``val_seen`` (``val``)     140    seen floor plans, different draws
``val_unseen`` (``test``)  134    12 held-out floor plans (3 per room kind)
``easy``                   600    seen floor plans reduced to <= 6 receptacles, few
                                  distractors (a curriculum split)
``easy_train``            1200    the two short task types in small rooms, on the seen
                                  floor plans less the 12 of ``easy_val``
``easy_val``               240    the same, on 12 seen floor plans ``easy_train`` never
                                  uses (:data:`EASY_VAL_FLOOR_PLANS`)
``easy_test``              240    the same, on the 12 held-out floor plans of ``test``
========================  ======  ==================================================

Task types cycle through the split's task types (``index % len(task_types)``: the six ALFWorld
types, or for the ``easy_*`` splits the two whose expert plans are shortest,
:data:`SHORT_TASK_TYPES`), so every split is balanced. The three ``easy_*`` splits draw from
pairwise disjoint floor plans, so no game (a floor plan's room with its objects) is in two of
them; the env declares them as its easy train / val / test splits
(:attr:`ALFWorldEnv.easy_splits`).
Room size ``"small"`` (:data:`ROOM_SIZES`) keeps every split's floor plans and task types but
reduces its rooms as ``easy`` does: games that generate in under a second, for tests.
A :class:`TaskSpec` is a pure function of ``(split, index, size)`` and the generator version.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache

from sdgym.envs.alfworld.layouts import floor_plan, floor_plan_numbers
from sdgym.envs.alfworld.scene import TASK_TYPES

GENERATOR_VERSION = 2
"""Bumped whenever generated games change; part of the cache path and of every seed."""

UNSEEN_FLOOR_PLANS: frozenset[int] = frozenset(
    {10, 20, 30, 210, 220, 230, 310, 320, 330, 410, 420, 430}
)
"""Floor plans held out for ``val_unseen``/``test``."""

EASY_VAL_FLOOR_PLANS: frozenset[int] = frozenset(
    {5, 15, 25, 205, 215, 225, 305, 315, 325, 405, 415, 425}
)
"""Seen floor plans (3 per room kind) that ``easy_val`` draws from and ``easy_train`` never does."""

SHORT_TASK_TYPES: tuple[str, ...] = ("pick_and_place_simple", "look_at_obj_in_light")
"""The task types of the ``easy_*`` splits: 4-8 expert steps in small rooms (the other four add
a cleaning/heating/cooling step or a second object)."""

FLOOR_PLAN_POOLS: dict[str, Callable[[int], bool]] = {
    "seen": lambda n: n not in UNSEEN_FLOOR_PLANS,
    "unseen": lambda n: n in UNSEEN_FLOOR_PLANS,
    "seen_less_easy_val": lambda n: n not in UNSEEN_FLOOR_PLANS | EASY_VAL_FLOOR_PLANS,
    "easy_val": lambda n: n in EASY_VAL_FLOOR_PLANS,
}
"""Floor-plan pools by name: whether a floor plan number belongs to the pool."""

ALIASES: dict[str, str] = {"val": "val_seen", "test": "val_unseen"}
"""DESIGN.md split names -> ALFWorld split names."""


@dataclass(frozen=True)
class SplitConfig:
    """How one split draws its tasks."""

    size: int
    floor_plans: str
    """Which floor plans the split draws from: a key of :data:`FLOOR_PLAN_POOLS`."""
    max_receptacles: int | None = None
    max_distractor_types: int = 10
    max_instances: int = 2
    task_types: tuple[str, ...] = TASK_TYPES
    """Task types, cycled by task index."""


_SMALL_ROOMS: dict[str, int] = {"max_receptacles": 6, "max_distractor_types": 3, "max_instances": 1}

SPLITS: dict[str, SplitConfig] = {
    "train": SplitConfig(3600, "seen"),
    "val_seen": SplitConfig(140, "seen"),
    "val_unseen": SplitConfig(134, "unseen"),
    "easy": SplitConfig(600, "seen", **_SMALL_ROOMS),
    "easy_train": SplitConfig(1200, "seen_less_easy_val", **_SMALL_ROOMS,
                              task_types=SHORT_TASK_TYPES),
    "easy_val": SplitConfig(240, "easy_val", **_SMALL_ROOMS, task_types=SHORT_TASK_TYPES),
    "easy_test": SplitConfig(240, "unseen", **_SMALL_ROOMS, task_types=SHORT_TASK_TYPES),
}

EASY_SPLITS: dict[str, str] = {"easy_train": "train", "easy_val": "val", "easy_test": "test"}
"""The easy curriculum splits and the role each plays (what the env declares as ``easy_splits``)."""


ROOM_SIZES: tuple[str, ...] = ("full", "small")
"""``full``: the split's own room limits; ``small``: at most 6 receptacles and 3 distractor types."""


def split_config(split: str, size: str = "full") -> SplitConfig:
    """The :class:`SplitConfig` of ``split`` at room size ``size``."""
    config = SPLITS[canonical_split(split)]
    if size not in ROOM_SIZES:
        raise ValueError(f"unknown ALFWorld room size {size!r}; use one of {ROOM_SIZES}")
    if size == "small":
        return replace(config, **_SMALL_ROOMS)
    return config


@dataclass(frozen=True)
class TaskSpec:
    """What to generate for ``(split, index)``: floor plan, task type, seed and room limits."""

    split: str
    index: int
    floor_plan: int
    task_type: str
    seed: int
    config: SplitConfig
    attempt: int = 0
    size: str = "full"


def canonical_split(split: str) -> str:
    """Resolve an alias (``val`` -> ``val_seen``, ``test`` -> ``val_unseen``)."""
    split = ALIASES.get(split, split)
    if split not in SPLITS:
        raise ValueError(
            f"unknown ALFWorld split {split!r}; use {sorted(SPLITS) + sorted(ALIASES)}"
        )
    return split


@cache
def split_floor_plans(split: str) -> tuple[int, ...]:
    """Floor plans a split draws from."""
    in_pool = FLOOR_PLAN_POOLS[SPLITS[canonical_split(split)].floor_plans]
    return tuple(n for n in floor_plan_numbers() if in_pool(n))


def task_seed(split: str, index: int, attempt: int, size: str = "full") -> int:
    """A platform-independent 32-bit seed for one generation attempt."""
    prefix = "alfworld" if size == "full" else f"alfworld-{size}"
    key = f"{prefix}/v{GENERATOR_VERSION}/{canonical_split(split)}/{index}/{attempt}"
    return zlib.crc32(key.encode())


def task_specs(split: str, index: int, size: str = "full") -> list[TaskSpec]:
    """Candidate specs for ``(split, index)`` in order; the generator takes the first that works
    (a later one is a *redraw*: the room could not host the task, or planning hit its cap)."""
    split = canonical_split(split)
    config = split_config(split, size)
    if not 0 <= index < config.size:
        raise IndexError(f"task index {index} out of range for split {split!r} ({config.size})")
    task_type = config.task_types[index % len(config.task_types)]
    plans = split_floor_plans(split)
    specs = []
    for attempt in range(64):
        seed = task_seed(split, index, attempt, size)
        number = random.Random(seed).choice(plans)
        floor_plan(number)  # fail early on a broken layout
        specs.append(TaskSpec(split, index, number, task_type, seed, config, attempt, size))
    return specs
