"""A handcoded ALFWorld expert: a short plan from any state, read off the PDDL facts.

For the six task types the plan is a few fixed moves: free the hands, fetch a target object
(go to its receptacle, open it if closed, take it), clean/heat/cool it at the task's appliance,
then put it in a receptacle of the goal type (twice for ``pick_two_obj_and_place``), or carry it
to a lamp and switch the lamp on (``look_at_obj_in_light``). Every choice is the cheapest one
(one command per go/open/take/move), ties broken by name, so the plan is deterministic.

:func:`handcoded_plan` returns ``None`` for states it does not model (objects inside movable
receptacles, goals it does not know); the caller then asks the planner.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

APPLIANCES: dict[str, tuple[str, str, str]] = {
    "pick_clean_then_place_in_recep": ("sinkbasintype", "isclean", "clean"),
    "pick_heat_then_place_in_recep": ("microwavetype", "ishot", "heat"),
    "pick_cool_then_place_in_recep": ("fridgetype", "iscool", "cool"),
}
"""Task type -> (appliance receptacle type, property it gives, command verb)."""

PLACE_TASKS = ("pick_and_place_simple", *APPLIANCES)


class Unsupported(Exception):
    """The state is outside what the handcoded expert models."""


@dataclass
class World:
    """The mutable facts the expert reasons about (PDDL names, lower case)."""

    at: str
    held: str | None
    location: dict[str, str]
    receptacle_type: dict[str, str]
    object_type: dict[str, str]
    inside: dict[str, str]
    openable: set[str]
    opened: set[str]
    properties: dict[str, set[str]]
    can_contain: set[tuple[str, str]]
    commands: list[tuple[str, ...]] = field(default_factory=list)

    @classmethod
    def from_facts(cls, facts: Iterable[Any]) -> World:
        """Parse TextWorld propositions (``name`` + ``arguments`` with ``.name``)."""
        by_name: dict[str, list[tuple[str, ...]]] = defaultdict(list)
        for fact in facts:
            by_name[fact.name.lower()].append(tuple(a.name for a in fact.arguments))
        if by_name.get("inreceptacleobject") or by_name.get("isreceptacleobjectfull"):
            raise Unsupported("objects inside movable receptacles")
        agent_at = by_name.get("atlocation", [])
        if len(agent_at) != 1:
            raise Unsupported("agent location unknown")
        held = [args[1] for args in by_name.get("holds", [])]
        properties = {
            key: {args[0] for args in by_name.get(key, [])}
            for key in ("isclean", "ishot", "iscool", "istoggled", "toggleable")
        }
        return cls(
            at=agent_at[0][1],
            held=held[0] if held else None,
            location=dict(by_name.get("receptacleatlocation", [])),
            receptacle_type=dict(by_name.get("receptacletype", [])),
            object_type=dict(by_name.get("objecttype", [])),
            inside=dict(by_name.get("inreceptacle", [])),
            openable={args[0] for args in by_name.get("openable", [])},
            opened={args[0] for args in by_name.get("opened", [])},
            properties=properties,
            can_contain=set(by_name.get("cancontain", [])),
        )

    # -------------------------------------------------------------- costs
    def reach_cost(self, receptacle: str) -> int:
        """Commands to stand at ``receptacle`` with it open."""
        go = 0 if self.location.get(receptacle) == self.at else 1
        return go + (receptacle in self.openable and receptacle not in self.opened)

    def cheapest(self, receptacles: Iterable[str]) -> str:
        """The receptacle reached with fewest commands (ties by name)."""
        options = sorted(receptacles, key=lambda r: (self.reach_cost(r), r))
        if not options:
            raise Unsupported("no receptacle for this step")
        return options[0]

    def of_type(self, type_name: str) -> list[str]:
        """Receptacles of a receptacle type."""
        return sorted(r for r, t in self.receptacle_type.items() if t == type_name)

    # ----------------------------------------------------------- commands
    def go_to(self, receptacle: str) -> None:
        """Go to ``receptacle`` (if elsewhere)."""
        if receptacle not in self.location:
            raise Unsupported(f"{receptacle} has no location")
        if self.location[receptacle] != self.at:
            self.commands.append(("go to", receptacle))
            self.at = self.location[receptacle]

    def reach(self, receptacle: str) -> None:
        """Go to ``receptacle`` (if elsewhere) and open it (if closed)."""
        self.go_to(receptacle)
        if receptacle in self.openable and receptacle not in self.opened:
            self.commands.append(("open", receptacle))
            self.opened.add(receptacle)

    def take(self, obj: str) -> None:
        """Fetch ``obj`` from its receptacle (hands must be free)."""
        receptacle = self.inside.get(obj)
        if receptacle is None:
            raise Unsupported(f"{obj} is not in a receptacle")
        self.reach(receptacle)
        self.commands.append(("take", obj, receptacle))
        del self.inside[obj]
        self.held = obj

    def put(self, receptacle: str) -> None:
        """Put the held object in ``receptacle``."""
        assert self.held is not None
        self.reach(receptacle)
        self.commands.append(("move", self.held, receptacle))
        self.inside[self.held] = receptacle
        self.held = None

    def free_hands(self) -> None:
        """Put down whatever is held, in the cheapest receptacle that can contain it."""
        if self.held is None:
            return
        held_type = self.object_type.get(self.held, "")
        hosts = [r for r, t in self.receptacle_type.items() if (t, held_type) in self.can_contain]
        self.put(self.cheapest(hosts))

    def fetch_cheapest(self, candidates: Iterable[str], extra: set[str] | None = None) -> str:
        """Hold one of ``candidates``: the held one if it is one, else the cheapest to take
        (``extra``: objects that will cost two more commands, e.g. not yet cleaned)."""
        candidates = sorted(candidates)
        if self.held in candidates:
            return self.held
        if not candidates:
            raise Unsupported("no object of the goal type left")
        self.free_hands()
        extra = extra or set()
        obj = min(
            (o for o in candidates if o in self.inside),
            key=lambda o: (self.reach_cost(self.inside[o]) + 2 * (o in extra), o),
            default=None,
        )
        if obj is None:
            raise Unsupported("goal objects are out of reach")
        self.take(obj)
        return obj


def _objects(world: World, type_name: str) -> list[str]:
    return sorted(o for o, t in world.object_type.items() if t == type_name)


def _place_plan(world: World, task_type: str, obj_type: str, parent_type: str) -> None:
    appliance = APPLIANCES.get(task_type)
    needed = appliance[1] if appliance else None
    candidates = _objects(world, obj_type)
    if needed is not None:
        # an object that already has the property saves the appliance trip
        lacking = {o for o in candidates if o not in world.properties[needed]}
        obj = world.fetch_cheapest(candidates, extra=lacking)
        if obj not in world.properties[needed]:
            # cleaning, heating and cooling need the agent there, not the appliance open
            station = min(
                world.of_type(appliance[0]),
                key=lambda r: (world.at != world.location.get(r), r),
                default=None,
            )
            if station is None:
                raise Unsupported(f"no {appliance[0]}")
            world.go_to(station)
            world.commands.append((appliance[2], obj, station))
            world.properties[needed].add(obj)
    else:
        world.fetch_cheapest(candidates)
    world.put(world.cheapest(world.of_type(parent_type)))


def _pick_two_plan(world: World, obj_type: str, parent_type: str) -> None:
    parents = world.of_type(parent_type)
    if not parents:
        raise Unsupported("no receptacle of the goal type")
    objects = _objects(world, obj_type)

    def placed(receptacle: str) -> int:
        return sum(world.inside.get(o) == receptacle for o in objects)

    target = min(parents, key=lambda r: (-placed(r), world.reach_cost(r), r))
    for _ in range(max(0, 2 - placed(target))):
        world.fetch_cheapest(o for o in objects if world.inside.get(o) != target)
        world.put(target)


def _light_plan(world: World, obj_type: str, lamp_type: str) -> None:
    world.fetch_cheapest(_objects(world, obj_type))
    lamps = [
        o
        for o in _objects(world, lamp_type)
        if o in world.properties["toggleable"] and o in world.inside
    ]
    if not lamps:
        raise Unsupported("no lamp")
    lamp = min(
        lamps,
        key=lambda o: (
            o not in world.properties["istoggled"],
            world.reach_cost(world.inside[o]),
            o,
        ),
    )
    world.go_to(world.inside[lamp])
    if lamp not in world.properties["istoggled"]:
        world.commands.append(("use", lamp))


_TEMPLATES = {
    "go to": "go to {0}",
    "open": "open {0}",
    "take": "take {0} from {1}",
    "move": "move {0} to {1}",
    "clean": "clean {0} with {1}",
    "heat": "heat {0} with {1}",
    "cool": "cool {0} with {1}",
    "use": "use {0}",
}
"""alfred.twl2's command templates for the actions the expert uses."""


def handcoded_plan(
    facts: Iterable[Any], params: Mapping[str, Any], task_type: str, names: Mapping[str, Any]
) -> list[str] | None:
    """Commands that reach the goal from ``facts``, or ``None`` if the state is not modelled.

    Args:
        facts: the PDDL state's propositions.
        params: ``traj_data.json``'s ``pddl_params`` (``object_target``, ``parent_target``...).
        task_type: one of the six ALFWorld task types.
        names: PDDL name -> entity info with its display ``name`` ("cabinet 3").
    """
    try:
        world = World.from_facts(facts)
        obj_type = str(params.get("object_target", "")).lower() + "type"
        parent_type = str(params.get("parent_target", "")).lower() + "type"
        if params.get("object_sliced") or params.get("mrecep_target"):
            raise Unsupported("sliced or movable-receptacle goals")
        if task_type in PLACE_TASKS:
            _place_plan(world, task_type, obj_type, parent_type)
        elif task_type == "pick_two_obj_and_place":
            _pick_two_plan(world, obj_type, parent_type)
        elif task_type == "look_at_obj_in_light":
            _light_plan(world, obj_type, str(params.get("toggle_target", "")).lower() + "type")
        else:
            raise Unsupported(task_type)
        return [
            _TEMPLATES[verb].format(*(names[arg].name for arg in args))
            for verb, *args in world.commands
        ]
    except (Unsupported, KeyError, IndexError):
        return None
