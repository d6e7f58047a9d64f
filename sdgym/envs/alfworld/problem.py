"""Write a :class:`~sdgym.envs.alfworld.scene.Scene` as an ALFWorld PDDL problem.

The problem follows ALFWorld's ``initial_state.pddl`` conventions: ALFRED ids escaped with
``_bar_``/``_minus_``/``_plus_``/``_dot_`` (so ``Apple|+00.10|...`` displays as "apple 1"),
``<Type>Type`` constants for object and receptacle types, ``canContain`` facts, and the goal
from alfworld's goal library (``alfworld.gen.goal_library.gdict``).
"""

from __future__ import annotations

from sdgym.envs.alfworld.scene import Scene, can_hold

_ESCAPES = (("-", "_minus_"), ("|", "_bar_"), ("+", "_plus_"), (".", "_dot_"), (",", "_comma_"))


def escape(alfred_id: str) -> str:
    """ALFRED id -> PDDL name, e.g. ``Apple|+00.10|+00.95|-01.00`` -> ``Apple_bar__plus_00_dot_10...``."""
    for old, new in _ESCAPES:
        alfred_id = alfred_id.replace(old, new)
    return alfred_id


def _abilities(type_name: str) -> list[str]:
    from alfworld.gen import constants

    abilities = constants.VAL_ACTION_OBJECTS
    names = []
    if type_name in abilities["Toggleable"]:
        return ["toggleable"]
    names.append("pickupable")
    for key, predicate in (
        ("Cleanable", "cleanable"),
        ("Heatable", "heatable"),
        ("Coolable", "coolable"),
        ("Sliceable", "sliceable"),
    ):
        if type_name in abilities[key]:
            names.append(predicate)
    if type_name in constants.MOVABLE_RECEPTACLES:
        names.append("isReceptacleObject")
    return names


def pddl_problem(scene: Scene, name: str) -> str:
    """The PDDL problem text of ``scene`` (deterministic: every list is sorted)."""
    from alfworld.gen import constants, goal_library

    object_types = sorted(
        {o.type_name for o in scene.objects} | set(constants.OBJECTS) - set(constants.RECEPTACLES)
    )
    receptacle_types = sorted(set(constants.RECEPTACLES) - set(constants.MOVABLE_RECEPTACLES))
    object_types = sorted(set(object_types) | set(constants.MOVABLE_RECEPTACLES))
    locations = sorted({r.location for r in scene.receptacles} | {scene.start_location})
    declarations = ["agent1 - agent"]
    declarations += [f"{t}Type - otype" for t in object_types]
    declarations += [f"{t}Type - rtype" for t in receptacle_types]
    declarations += [
        f"{escape(o.object_id)} - object" for o in sorted(scene.objects, key=lambda o: o.object_id)
    ]
    declarations += [f"{escape(r.object_id)} - receptacle" for r in scene.receptacles]
    declarations += [f"{escape(loc)} - location" for loc in locations]

    facts = [f"(atLocation agent1 {escape(scene.start_location)})"]
    for receptacle in scene.receptacles:
        rid = escape(receptacle.object_id)
        facts.append(f"(receptacleType {rid} {receptacle.type_name}Type)")
        facts.append(f"(receptacleAtLocation {rid} {escape(receptacle.location)})")
        if receptacle.type_name in constants.OPENABLE_CLASS_SET:
            facts.append(f"(openable {rid})")
    for placed in sorted(scene.objects, key=lambda o: o.object_id):
        oid = escape(placed.object_id)
        facts.append(f"(objectType {oid} {placed.type_name}Type)")
        facts.append(f"(inReceptacle {oid} {escape(placed.receptacle.object_id)})")
        facts.append(f"(objectAtLocation {oid} {escape(placed.receptacle.location)})")
        facts += [f"({ability} {oid})" for ability in _abilities(placed.type_name)]
    present_receptacle_types = sorted({r.type_name for r in scene.receptacles})
    present_object_types = sorted({o.type_name for o in scene.objects})
    for rtype in present_receptacle_types:
        for otype in present_object_types:
            if can_hold(rtype, otype):
                facts.append(f"(canContain {rtype}Type {otype}Type)")
    goal = goal_library.gdict[scene.task_type]["pddl"].format(
        obj=scene.object_target,
        recep=scene.parent_target,
        toggle=scene.toggle_target,
        mrecep="",
    )
    goal = goal.replace("#", "-").strip()
    joined_declarations = "\n        ".join(declarations)
    joined_facts = "\n        ".join(facts)
    return (
        f"(define (problem {name})\n"
        f"    (:domain alfred)\n"
        f"    (:objects\n        {joined_declarations}\n    )\n"
        f"    (:init\n        {joined_facts}\n    )\n"
        f"    {goal}\n"
    )
