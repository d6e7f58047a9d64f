"""Random ALFRED scenes on a floor plan: which objects exist, where they lie, what the task is.

:func:`sample_scene` draws a :class:`Scene` from a seed: a task of one of the six ALFWorld task
types whose goal is not already satisfied, the target objects, distractor objects placed in
receptacles that can hold them (``constants.VAL_RECEPTACLE_OBJECTS``) and the agent's start pose.
It is pure Python on the wheel's constants; :mod:`.problem` writes the scene as PDDL.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from functools import cache

from sdgym.envs.alfworld.layouts import FloorPlan, Receptacle

TASK_TYPES: tuple[str, ...] = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
"""The six ALFWorld task types, in ALFWorld's order (task type ids 1..6)."""

LAMP_HOSTS: dict[str, tuple[str, ...]] = {
    "DeskLamp": ("Desk", "SideTable", "Dresser", "Shelf", "CoffeeTable", "DiningTable"),
    "FloorLamp": ("SideTable", "Dresser", "Desk", "Shelf", "CoffeeTable", "ArmChair", "Sofa"),
}
"""Receptacle types a lamp may stand in (ALFRED's metadata puts lamps in a receptacle)."""

_APPLIANCE = {
    "pick_clean_then_place_in_recep": ("SinkBasin", "Cleanable"),
    "pick_heat_then_place_in_recep": ("Microwave", "Heatable"),
    "pick_cool_then_place_in_recep": ("Fridge", "Coolable"),
}


class SceneError(ValueError):
    """The floor plan cannot host the requested task (the caller draws again)."""


@dataclass(frozen=True)
class PlacedObject:
    """An object instance: ALFRED id, type and the receptacle it lies in."""

    object_id: str
    type_name: str
    receptacle: Receptacle


@dataclass(frozen=True)
class Scene:
    """A task on a floor plan: receptacles, placed objects, start pose and goal parameters."""

    floor_plan: FloorPlan
    task_type: str
    object_target: str
    parent_target: str
    toggle_target: str
    receptacles: tuple[Receptacle, ...]
    objects: tuple[PlacedObject, ...]
    start_location: str
    goal_template: str
    pddl_params: dict[str, object] = field(default_factory=dict)


@cache
def _hosts() -> dict[str, frozenset[str]]:
    """Object type -> receptacle types that can hold it (lamps from :data:`LAMP_HOSTS`)."""
    from alfworld.gen import constants

    hosts: dict[str, set[str]] = {}
    for receptacle_type, contents in constants.VAL_RECEPTACLE_OBJECTS.items():
        if receptacle_type in constants.MOVABLE_RECEPTACLES:
            continue
        for object_type in contents:
            if "Sliced" not in object_type:
                hosts.setdefault(object_type, set()).add(receptacle_type)
    for lamp, lamp_hosts in LAMP_HOSTS.items():
        hosts[lamp] = set(lamp_hosts)
    return {key: frozenset(value) for key, value in hosts.items()}


def can_hold(receptacle_type: str, object_type: str) -> bool:
    """Whether a static receptacle type can hold an object type (the domain's ``canContain``)."""
    return receptacle_type in _hosts().get(object_type, frozenset())


def _object_id(type_name: str, receptacle: Receptacle, rng: random.Random, taken: set[str]) -> str:
    base = [float(part) for part in receptacle.object_id.split("|")[1:4]]
    while True:
        x, y, z = (value + rng.uniform(-0.3, 0.3) for value in base)
        object_id = f"{type_name}|{x:+06.2f}|{y:+06.2f}|{z:+06.2f}"
        if object_id not in taken:
            taken.add(object_id)
            return object_id


def _choose_task(
    plan: FloorPlan, task_type: str, receptacle_types: set[str], rng: random.Random
) -> tuple[str, str, str]:
    """``(object_target, parent_target, toggle_target)`` for ``task_type`` on ``plan``."""
    from alfworld.gen import constants

    hosts = _hosts()
    lamps = set(constants.VAL_ACTION_OBJECTS["Toggleable"])
    present = sorted(
        t
        for t in plan.object_types
        if t in hosts and t not in lamps and hosts[t] & receptacle_types
    )
    if task_type == "look_at_obj_in_light":
        toggles = sorted(t for t in plan.object_types & lamps if hosts[t] & receptacle_types)
        if not toggles or not present:
            raise SceneError(f"{plan.name} has no lamp or no object for {task_type}")
        return rng.choice(present), "", rng.choice(toggles)
    excluded = set()
    if task_type in _APPLIANCE:
        appliance, ability = _APPLIANCE[task_type]
        if appliance not in receptacle_types:
            raise SceneError(f"{plan.name} has no {appliance}")
        present = [t for t in present if t in constants.VAL_ACTION_OBJECTS[ability]]
        excluded.add(appliance)
    options = [
        (obj, recep)
        for obj in present
        for recep in sorted(receptacle_types - excluded)
        if can_hold(recep, obj) and (hosts[obj] & receptacle_types) - {recep} - excluded
    ]
    if not options:
        raise SceneError(f"{plan.name} has no object/receptacle pair for {task_type}")
    obj, recep = rng.choice(options)
    return obj, recep, ""


def _needed_receptacles(
    receptacles: list[Receptacle],
    required_types: set[str],
    placements: tuple[tuple[str, set[str]], ...],
    rng: random.Random,
) -> list[Receptacle]:
    """Receptacles a reduced room must keep: one of each required type, one host per object."""
    needed = [
        rng.choice([r for r in receptacles if r.type_name == t]) for t in sorted(required_types)
    ]
    for type_name, forbidden in placements:
        if not type_name:
            continue
        hosts = [
            r
            for r in receptacles
            if can_hold(r.type_name, type_name) and r.type_name not in forbidden
        ]
        if not any(r in needed for r in hosts):
            needed.append(rng.choice(hosts))
    return needed


def sample_scene(
    plan: FloorPlan,
    task_type: str,
    seed: int,
    *,
    max_receptacles: int | None = None,
    max_distractor_types: int = 10,
    max_instances: int = 2,
) -> Scene:
    """Draw a task of ``task_type`` on ``plan`` from ``seed`` (raises :class:`SceneError`).

    Args:
        max_receptacles: keep at most this many receptacles (those the task needs first).
        max_distractor_types: number of other object types placed in the room.
        max_instances: most instances of each distractor type.
    """
    from alfworld.gen import constants, goal_library

    rng = random.Random(seed)
    receptacles = list(plan.receptacles)
    obj, parent, toggle = _choose_task(plan, task_type, {r.type_name for r in receptacles}, rng)
    appliance = _APPLIANCE[task_type][0] if task_type in _APPLIANCE else ""
    forbidden = {parent, appliance} - {""}
    if max_receptacles is not None and len(receptacles) > max_receptacles:
        needed = _needed_receptacles(
            receptacles, forbidden, ((obj, forbidden), (toggle, set())), rng
        )
        rest = [r for r in receptacles if r not in needed]
        rng.shuffle(rest)
        keep = set(needed + rest[: max(0, max_receptacles - len(needed))])
        receptacles = [r for r in receptacles if r in keep]
    taken: set[str] = set()
    objects: list[PlacedObject] = []

    def place(type_name: str, count: int, forbidden: set[str]) -> None:
        hosts = [r for r in receptacles if can_hold(r.type_name, type_name)]
        hosts = [r for r in hosts if r.type_name not in forbidden]
        if not hosts:
            raise SceneError(f"nowhere to put {type_name} in {plan.name}")
        for _ in range(count):
            host = rng.choice(hosts)
            objects.append(PlacedObject(_object_id(type_name, host, rng, taken), type_name, host))

    target_count = rng.randint(2, 3) if task_type == "pick_two_obj_and_place" else rng.randint(1, 2)
    place(obj, target_count, forbidden)
    if toggle:
        place(toggle, 1, set())
    lamps = set(constants.VAL_ACTION_OBJECTS["Toggleable"])
    receptacle_types = {r.type_name for r in receptacles}
    others = sorted(
        t
        for t in plan.object_types
        if t not in (obj, toggle)
        and t not in lamps
        and _hosts().get(t, frozenset()) & receptacle_types
    )
    rng.shuffle(others)
    for type_name in sorted(others[:max_distractor_types]):
        # the goal's object type never starts in the goal receptacle type
        place(type_name, rng.randint(1, max_instances), set())
    x, z = rng.choice(plan.points)
    start = f"loc|{x}|{z}|{rng.randrange(4)}|30"
    goal_key = task_type
    template = rng.choice(goal_library.gdict[goal_key]["templates"])
    description = template.format(
        obj=obj.lower(), recep=parent.lower(), toggle=toggle.lower(), mrecep=""
    )
    params = {
        "object_target": obj,
        "parent_target": parent,
        "toggle_target": toggle,
        "mrecep_target": "",
        "object_sliced": False,
    }
    return Scene(
        floor_plan=plan,
        task_type=task_type,
        object_target=obj,
        parent_target=parent,
        toggle_target=toggle,
        receptacles=tuple(receptacles),
        objects=tuple(objects),
        start_location=start,
        goal_template=description,
        pddl_params=params,
    )


def task_view(scene: Scene) -> Scene:
    """``scene`` reduced to what its task needs, for planning: the target objects and lamp, the
    receptacles holding them, the task's appliances and one receptacle of the goal type (an
    always-open one if any). A plan for this view is a plan for the whole scene (every room
    entity keeps its id), and its search space stays small in any room."""
    from alfworld.gen import constants

    kept_types = {scene.object_target, scene.toggle_target} - {""}
    objects = tuple(o for o in scene.objects if o.type_name in kept_types)
    needed = {o.receptacle for o in objects}
    appliance = _APPLIANCE[scene.task_type][0] if scene.task_type in _APPLIANCE else ""
    needed |= {r for r in scene.receptacles if r.type_name == appliance}
    parents = [r for r in scene.receptacles if r.type_name == scene.parent_target]
    if parents:
        needed.add(
            min(parents, key=lambda r: (r.type_name in constants.OPENABLE_CLASS_SET, r.object_id))
        )
    receptacles = tuple(r for r in scene.receptacles if r in needed)
    return replace(scene, receptacles=receptacles, objects=objects)
