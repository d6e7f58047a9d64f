"""The ALFRED floor plans shipped in the alfworld wheel (``alfworld/gen/layouts``).

Each floor plan ``N`` comes as three files: ``FloorPlanN-openable.json`` (receptacle id ->
``[x, z, rotation, horizon]``, the pose from which the receptacle is reached),
``FloorPlanN-objects.json`` (object and receptacle types present in the room) and
``FloorPlanN-layout.npy`` (reachable ``(x, z)`` grid points). :func:`floor_plan` turns them into a
:class:`FloorPlan` with receptacles and discrete ALFRED locations (``loc|x|z|rot|horizon``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

GRID_STEP = 0.25
"""ALFRED's agent step size: metres per grid unit of a location id."""

ROOM_KINDS: dict[int, str] = {0: "kitchen", 2: "livingroom", 3: "bedroom", 4: "bathroom"}
"""Room kind by ``floor_plan_number // 100``."""


@dataclass(frozen=True)
class Receptacle:
    """A static receptacle of a floor plan: its ALFRED id, type and access location."""

    object_id: str
    type_name: str
    location: str


@dataclass(frozen=True)
class FloorPlan:
    """One ALFRED room: static receptacles, object types present and free grid points."""

    number: int
    receptacles: tuple[Receptacle, ...]
    object_types: frozenset[str]
    points: tuple[tuple[int, int], ...]

    @property
    def name(self) -> str:
        """``FloorPlanN``."""
        return f"FloorPlan{self.number}"

    @property
    def room(self) -> str:
        """``kitchen``, ``livingroom``, ``bedroom`` or ``bathroom``."""
        return ROOM_KINDS.get(self.number // 100, "room")


def layouts_dir() -> Path:
    """The wheel's ``alfworld/gen/layouts`` folder."""
    return Path(str(resources.files("alfworld.gen") / "layouts"))


@cache
def floor_plan_numbers() -> tuple[int, ...]:
    """Numbers of every floor plan with all three layout files, ascending."""
    folder = layouts_dir()
    numbers = []
    for path in folder.glob("FloorPlan*-openable.json"):
        match = re.fullmatch(r"FloorPlan(\d+)-openable\.json", path.name)
        if match is None:
            continue
        number = int(match.group(1))
        stem = folder / f"FloorPlan{number}"
        if Path(f"{stem}-objects.json").exists() and Path(f"{stem}-layout.npy").exists():
            numbers.append(number)
    return tuple(sorted(numbers))


def location_id(x: float, z: float, rotation: float, horizon: float) -> str:
    """ALFRED's location id for a pose, e.g. ``loc|4|-3|1|45``."""
    return f"loc|{round(x / GRID_STEP)}|{round(z / GRID_STEP)}|{round(rotation / 90) % 4}|{round(horizon)}"


@cache
def floor_plan(number: int) -> FloorPlan:
    """Load floor plan ``number`` from the wheel (receptacles sorted by id)."""
    from alfworld.gen import constants  # lazy: the engine is an optional extra

    stem = layouts_dir() / f"FloorPlan{number}"
    openable = json.loads(Path(f"{stem}-openable.json").read_text())
    types = json.loads(Path(f"{stem}-objects.json").read_text())
    grid = np.load(f"{stem}-layout.npy")
    static = set(constants.RECEPTACLES) - set(constants.MOVABLE_RECEPTACLES)
    receptacles = []
    for object_id in sorted(openable):
        type_name = (
            object_id.split("|")[-1] if object_id.count("|") > 3 else object_id.split("|")[0]
        )
        if type_name not in static:
            continue
        x, z, rotation, horizon = openable[object_id]
        receptacles.append(Receptacle(object_id, type_name, location_id(x, z, rotation, horizon)))
    points = tuple(sorted({(round(x / GRID_STEP), round(z / GRID_STEP)) for x, z in grid}))
    return FloorPlan(number, tuple(receptacles), frozenset(types), points)
