"""A compact, ranked candidate set for discrete agents on ScienceWorld, from public text only.

:func:`rank_candidates` turns the valid-action list (:mod:`~sdgym.envs.scienceworld.valid_actions`)
into the candidates of :meth:`~sdgym.envs.scienceworld.env.ScienceWorldEnv.candidate_actions`,
best first: what is never worth a step left out, the rest scored from the task description,
the observation, the inventory and the agent's last commands, verbs taking turns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sdgym.envs.scienceworld.valid_actions import (
    FUNCTION_WORDS,
    NOT_THINGS,
    TOKEN,
    ValidAction,
    command_objects,
    command_verb,
    normalise,
    referents,
)

NEVER_OFFERED: frozenset[str] = frozenset({"reset task", "task", "inventory", "dunk"})
"""Verbs left out of the candidates: ``reset task`` restarts the episode, ``task`` and
``inventory`` only repeat what the agent can read (and let no time pass), and the parser
rejects every listed ``dunk`` ("No known action matches that input")."""

ELECTRICAL_VERBS: frozenset[str] = frozenset({"connect", "disconnect"})
"""Verbs offered on the electrical tasks only (elsewhere they are over half of the list)."""

FIXTURES: frozenset[str] = frozenset({
    "bathtub", "bed", "bee hive", "book shelf", "bookshelf", "chair", "closet", "counter",
    "couch", "cupboard", "desk", "door", "drain", "drawer", "fire pit", "freezer", "fridge",
    "furnace", "oven", "sewer", "shelf", "sink", "sofa", "stove", "table", "toilet",
    "workbench",
})
"""Furniture and appliances: places to put things in or on, rarely things to carry."""

CONTAINERS: frozenset[str] = FIXTURES | {
    "basket", "beaker", "bottle", "bowl", "box", "bucket", "cup", "flask", "flower pot", "glass",
    "inclined plane", "jar", "jug", "pot", "tray",
}
"""What things are put in, on or poured into."""

_CARRIED_VERBS = frozenset({"pick up", "move", "pour", "put down", "eat", "mix"})
_DESTINATION_VERBS = frozenset({"move", "pour"})


def _is_a(name: str, kinds: frozenset[str]) -> bool:
    """Whether the object ``name`` (``metal pot``, ``drawer in counter``) is one of ``kinds``,
    going by the last words before its place (``in ...``, ``on ...``, ``containing ...``)."""
    head = re.split(r" (?:in|on|containing|with) ", name, maxsplit=1)[0]
    return any(head == kind or head.endswith(" " + kind) for kind in kinds)


@dataclass(frozen=True)
class RankingWeights:
    """How :func:`rank_candidates` scores a command (public text only)."""

    task: float = 3.0
    """Per object: share of its words that the task description has."""
    inventory: float = 2.0
    """Per object: named in the inventory."""
    recent: float = 2.0
    """Per object: named in one of the agent's last commands."""
    observation: float = 0.5
    """Per object: named in the current observation."""
    repeat: float = 4.0
    """The command is one of the agent's last commands (a probe repeated: ``look at X``)."""
    fixture: float = -2.0
    """Carrying furniture or an appliance."""
    container: float = 1.0
    """Putting something into a container."""
    task_verb: float = 1.0
    """The task uses the verb."""

    rank_decay: float = 0.5
    """Subtracted per better command of the same verb (verbs take turns)."""
    history: int = 6
    """How many of the agent's last commands count as recent."""
    verbs: tuple[tuple[str, float], ...] = ()
    """Prior per verb."""


@dataclass(frozen=True)
class Candidate:
    """A candidate command and what :func:`rank_candidates` scores it by (each in [0, 1]; the
    object features are means over the command's objects)."""

    text: str
    verb: str
    task: float
    """Share of the objects' content words that the task description has."""
    inventory: float
    """Objects named in the inventory."""
    recent: float
    """Objects named in the agent's last commands."""
    observation: float
    """Objects named in the current observation."""
    repeat: float
    """1 for the agent's last command, falling by 0.1 per command before it; 0 if none."""
    fixture: float = 0.0
    """1 if the command would carry (pick up, move, pour, put down, eat, mix) furniture or an
    appliance (:data:`FIXTURES`)."""
    container: float = 0.0
    """1 if the command moves or pours something into a container (:data:`CONTAINERS`)."""
    task_verb: float = 0.0
    """1 if the task description uses the command's verb (``mix``, ``focus``, ``move``)."""


def candidate_features(
    actions: Sequence[ValidAction], *, task: str, observation: str, inventory: str,
    recent: Sequence[str], electrical: bool, history: int = 6,
) -> list[Candidate]:
    """The candidates among ``actions`` (see :func:`rank_candidates`) and their features."""
    names = referents(actions)
    listed = {normalise(a.text) for a in actions}
    task_words = _content(task)
    inventory, observation = inventory.lower(), observation.lower()
    last = list(dict.fromkeys(normalise(c) for c in reversed(recent[-history:])))
    last_text = " | ".join(last)
    candidates = []
    for action in actions:
        text = normalise(action.text)
        verb = command_verb(text)
        if verb in NEVER_OFFERED or (verb in ELECTRICAL_VERBS and not electrical):
            continue
        objects = [normalise(o) for o in command_objects(action, names)]
        if verb == "go to" and objects and objects[0].startswith("door to ") \
                and f"go to {objects[0][len('door to '):]}" in listed:
            continue
        if verb not in ("go to", "teleport to") and text != "look at agent" \
                and any(o in NOT_THINGS for o in objects):
            continue
        if verb in ("use", "move", "connect") and len(objects) == 2 and objects[0] == objects[1]:
            continue  # using, moving or connecting a thing to itself
        if verb == "mix" and not task_words & {"mix", "chemistry"}:
            continue
        share = [len(words & task_words) / max(1, len(words))
                 for words in map(_content, objects)]
        count = max(1, len(objects))
        candidates.append(Candidate(
            action.text, verb,
            task=sum(share) / count,
            inventory=sum(o in inventory for o in objects) / count,
            recent=sum(o in last_text for o in objects) / count,
            observation=sum(o in observation for o in objects) / count,
            repeat=max(0.0, 1 - 0.1 * last.index(text)) if text in last else 0.0,
            fixture=float(verb in _CARRIED_VERBS and bool(objects)
                          and _is_a(objects[0], FIXTURES)),
            container=float(verb in _DESTINATION_VERBS and len(objects) == 2
                            and _is_a(objects[1], CONTAINERS)),
            task_verb=float(verb.split()[0] in task_words),
        ))
    return candidates


def rank_candidates(
    actions: Sequence[ValidAction], *, task: str, observation: str, inventory: str,
    recent: Sequence[str], electrical: bool, weights: RankingWeights | None = None,
) -> list[str]:
    """ScienceWorld's candidate commands now, most promising first (public text only).

    From the valid-action list: every action once (the list names each ``(template, objects)``
    once), without the verbs of :data:`NEVER_OFFERED`, without ``connect``/``disconnect``
    unless the task is electrical, without commands that treat a room, the agent, the air or the
    inventory as a thing (``move apple to kitchen``, ``focus on hallway``; ``look at agent``
    stays), without ``go to door to X`` where ``go to X`` is listed, without using, moving or
    connecting a thing to itself, and without ``mix`` unless the task is about mixing or
    chemistry. Ranked by a score from the task description, the observation, the inventory text
    and the agent's own last commands (:class:`Candidate`, weighted by
    :class:`RankingWeights`), where each further command of a verb loses ``rank_decay``, so
    that verbs take turns."""
    weights = weights or DEFAULT_WEIGHTS
    candidates = candidate_features(actions, task=task, observation=observation,
                                    inventory=inventory, recent=recent,
                                    electrical=electrical, history=weights.history)
    return order_candidates(candidates, weights)


def order_candidates(candidates: Sequence[Candidate], weights: RankingWeights) -> list[str]:
    """The texts of ``candidates``, best first under ``weights``."""
    prior = dict(weights.verbs)
    groups: dict[str, list[tuple[float, str]]] = {}
    for c in candidates:
        score = (weights.task * c.task + weights.inventory * c.inventory
                 + weights.recent * c.recent + weights.observation * c.observation
                 + weights.repeat * c.repeat + weights.fixture * c.fixture
                 + weights.container * c.container + weights.task_verb * c.task_verb)
        groups.setdefault(c.verb, []).append((score, c.text))
    ranked: list[tuple[float, str]] = []
    for verb, group in groups.items():
        group.sort(key=lambda item: (-item[0], len(item[1]), item[1]))
        bonus = prior.get(verb, 0.0)
        ranked += [(score + bonus - weights.rank_decay * i, text)
                   for i, (score, text) in enumerate(group)]
    ranked.sort(key=lambda item: (-item[0], len(item[1]), item[1]))
    return [text for _, text in ranked]


def _content(text: str) -> set[str]:
    return {w for w in TOKEN.findall(text.lower()) if w not in FUNCTION_WORDS}


DEFAULT_WEIGHTS = RankingWeights(verbs=(
    ("look around", 10.0), ("wait1", 8.0), ("wait", 4.0), ("go to", 4.0), ("teleport to", 4.0),
    ("open", 3.0), ("activate", 2.0), ("deactivate", 2.0), ("focus on", 1.0),
    ("pick up", 1.0), ("look at", 1.0), ("move", 1.0), ("use", 0.5), ("pour", 0.0),
    ("connect", 1.0), ("read", 0.0), ("put down", -0.5), ("close", -1.0), ("mix", -1.0),
    ("look in", -2.0), ("eat", -3.0), ("flush", -3.0), ("disconnect", -2.0),
))
