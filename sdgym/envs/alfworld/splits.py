"""Fixed ALFWorld splits over the wheel's floor plans: which task each ``(split, index)`` is.

========================  ======  ==================================================
split (aliases)           tasks   floor plans and rooms
========================  ======  ==================================================
``train``                 3600    the 108 seen floor plans, full rooms
``val_seen`` (``val``)     140    seen floor plans, different draws
``val_unseen`` (``test``)  134    12 held-out floor plans (3 per room kind)
``easy``                   600    seen floor plans reduced to <= 6 receptacles, few
                                  distractors (a curriculum split)
========================  ======  ==================================================

Task types cycle through the six ALFWorld types (``index % 6``), so every split is balanced.
Room size ``"small"`` (:data:`ROOM_SIZES`) keeps every split's floor plans and task types but
reduces its rooms as ``easy`` does: games that generate in under a second, for tests.
A :class:`TaskSpec` is a pure function of ``(split, index, size)`` and the generator version.
"""

from __future__ import annotations

import random
import zlib
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

ALIASES: dict[str, str] = {"val": "val_seen", "test": "val_unseen"}
"""DESIGN.md split names -> ALFWorld split names."""


@dataclass(frozen=True)
class SplitConfig:
    """How one split draws its tasks."""

    size: int
    unseen: bool
    max_receptacles: int | None = None
    max_distractor_types: int = 10
    max_instances: int = 2


SPLITS: dict[str, SplitConfig] = {
    "train": SplitConfig(3600, unseen=False),
    "val_seen": SplitConfig(140, unseen=False),
    "val_unseen": SplitConfig(134, unseen=True),
    "easy": SplitConfig(
        600, unseen=False, max_receptacles=6, max_distractor_types=3, max_instances=1
    ),
}


ROOM_SIZES: tuple[str, ...] = ("full", "small")
"""``full``: the split's own room limits; ``small``: at most 6 receptacles and 3 distractor types."""


def split_config(split: str, size: str = "full") -> SplitConfig:
    """The :class:`SplitConfig` of ``split`` at room size ``size``."""
    config = SPLITS[canonical_split(split)]
    if size not in ROOM_SIZES:
        raise ValueError(f"unknown ALFWorld room size {size!r}; use one of {ROOM_SIZES}")
    if size == "small":
        return replace(config, max_receptacles=6, max_distractor_types=3, max_instances=1)
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
    unseen = SPLITS[canonical_split(split)].unseen
    return tuple(n for n in floor_plan_numbers() if (n in UNSEEN_FLOOR_PLANS) == unseen)


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
    task_type = TASK_TYPES[index % len(TASK_TYPES)]
    plans = split_floor_plans(split)
    specs = []
    for attempt in range(64):
        seed = task_seed(split, index, attempt, size)
        number = random.Random(seed).choice(plans)
        floor_plan(number)  # fail early on a broken layout
        specs.append(TaskSpec(split, index, number, task_type, seed, config, attempt, size))
    return specs
