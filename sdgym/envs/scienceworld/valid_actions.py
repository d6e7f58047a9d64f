"""ScienceWorld's valid-action list as data: each entry's text, template and object ids, the verb
of a command and the names of the objects it acts on.

The simulator lists every valid action once, as ``(text, template id, object ids)``
(``getValidActionObjectCombinationsJSON``), naming each object by a referent that is unique in
the current state ("thermometer", "door to kitchen", "bathroom door").
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

NO_MATCH = "No known action matches that input."
"""The simulator's answer to a command its parser cannot match (nothing happens)."""

PARSER_ERROR = "Error Encountered"
"""The simulator's answer when a matched action cannot be posted (nothing happens)."""

TOKEN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class ValidAction:
    """One entry of the simulator's valid-action list: its text, template and object ids."""

    text: str
    template_id: int
    obj_ids: tuple[int, ...]


def parse_valid_actions(payload: str) -> list[ValidAction]:
    """The entries of ``getValidActionObjectCombinationsJSON``'s answer, sorted by text (the
    order of upstream's ``getValidActionObjectCombinations``)."""
    entries = json.loads(payload)["validActions"]
    actions = [
        ValidAction(str(e["action"]), int(e.get("template_id", -1)),
                    tuple(int(i) for i in e.get("obj_ids", ())))
        for e in entries
    ]
    return sorted(actions, key=lambda a: a.text)


def normalise(command: str) -> str:
    """Lower case, single spaces."""
    return " ".join(command.lower().split())


VERBS: tuple[str, ...] = (
    "look around", "look at", "look in", "go to", "teleport to", "pick up", "put down",
    "focus on", "open", "close", "activate", "deactivate", "eat", "move", "pour", "use",
    "connect", "disconnect", "mix", "read", "flush", "dunk", "wait1", "wait", "inventory",
    "task", "reset task",
)
"""Verbs of the valid-action list (the first words of its templates), longest first."""


_VERB = re.compile("^(" + "|".join(re.escape(v) for v in sorted(VERBS, key=len, reverse=True))
                   + r")(?: |$)")


def command_verb(text: str) -> str:
    """The verb of a listed command (one of :data:`VERBS`; the first word otherwise)."""
    text = normalise(text)
    match = _VERB.match(text)
    if match:
        return match.group(1)
    return text.split(" ", 1)[0] if text else ""


def referents(actions: Sequence[ValidAction]) -> dict[int, str]:
    """Object id -> the list's name for it (from the one-object ``look at X`` commands)."""
    names: dict[int, str] = {}
    for action in actions:
        if len(action.obj_ids) == 1 and action.text.startswith("look at "):
            names[action.obj_ids[0]] = action.text[len("look at "):]
    return names


def command_objects(action: ValidAction, names: dict[int, str]) -> list[str]:
    """The names of the objects ``action`` acts on, in template order."""
    verb = command_verb(action.text)
    if not action.obj_ids or verb in ("look around", "wait", "wait1"):
        return []
    if all(i in names for i in action.obj_ids):
        return [names[i] for i in action.obj_ids]
    rest = action.text[len(verb):].strip()
    for joint in (" to ", " into ", " on ", " in "):
        if len(action.obj_ids) == 2 and joint in rest:
            first, second = rest.split(joint, 1)
            return [first, second]
    return [rest]


ROOMS: frozenset[str] = frozenset({
    "kitchen", "hallway", "bathroom", "bedroom", "living room", "art studio", "workshop",
    "greenhouse", "outside", "foundry",
})
"""ScienceWorld's locations: places to go to, never objects to pick up, move things to, focus
on or use (the list offers ``move apple to kitchen``, ``focus on hallway`` ...)."""

NOT_THINGS: frozenset[str] = ROOMS | {"agent", "air", "inventory"}

FUNCTION_WORDS: frozenset[str] = frozenset({
    "a", "an", "the", "to", "on", "in", "into", "at", "of", "from", "with", "and", "or", "is",
    "it", "its", "you", "your", "that", "this", "for", "by",
})
"""Words that name no thing (left out when texts are compared)."""
