"""Privileged ScienceWorld facts: parsed goal progress, the expert path, and their text rendering.

The simulator reports goal progress as text (``GoalSequence.getProgressString``)::

    Completed keys: ...
    -----
    Sequential Subgoals:
    -----
    0\\tfalse\\t   GoalFind\\tfocus on substance
    ...
    Unordered and Optional Subgoals:
    ...

:func:`parse_goal_progress` turns it into lists of sub-goals. :class:`ExpertPath` follows the
upstream gold action sequence (a plan from the task's start) while the agent sticks to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sdgym.envs.scienceworld.valid_actions import normalise


def parse_goal_progress(text: str) -> dict[str, Any]:
    """Sub-goals from the simulator's progress string.

    Returns ``{"sequential": [...], "optional": [...], "completed_keys": [...]}`` where each
    sub-goal is ``{"description", "type", "done"}``; the sequential ones must all be done (in order)
    for the task to be complete, the optional ones only earn score.
    """
    sections: dict[str, list[dict[str, Any]]] = {"sequential": [], "optional": []}
    completed_keys: list[str] = []
    current: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Completed keys:"):
            keys = stripped[len("Completed keys:") :].split(",")
            completed_keys = [key.strip() for key in keys if key.strip()]
        elif stripped.startswith("Sequential Subgoals"):
            current = "sequential"
        elif stripped.startswith("Unordered and Optional Subgoals"):
            current = "optional"
        elif current is not None:
            parts = line.split("\t")
            if len(parts) >= 4 and parts[0].strip().isdigit():
                sections[current].append(
                    {
                        "description": "\t".join(parts[3:]).strip(),
                        "type": parts[2].strip(),
                        "done": parts[1].strip() == "true",
                    }
                )
    return {**sections, "completed_keys": completed_keys}


AMBIGUOUS_PREFIX = "Ambiguous request"
"""How the simulator starts an observation that asks which of several matches was meant."""

FIRST_CHOICE = "0"
"""The answer upstream's gold agent gives to an "Ambiguous request": the first listed match."""


def is_choice(command: str) -> bool:
    """Whether ``command`` answers an "Ambiguous request" (a bare number)."""
    return command.strip().isdigit()


_DOOR = re.compile(r"^(open|close) door to (.+)$")
_GO = re.compile(r"^go to (.+)$")


def teleport_shortcut(gold: list[str]) -> list[str]:
    """``gold`` with each run of room-to-room moves replaced by one ``teleport to <room>``.

    Upstream's gold sequences walk (``open door to kitchen``, ``go to kitchen``, ``open door to
    hallway``, ``go to hallway``, ...) also where the ``teleportAction`` simplification is on. A
    run of door and ``go to`` commands only changes the agent's room, so under that
    simplification the shortest expert goes straight to the run's last room. A run with no
    ``go to`` (a door opened for its own sake) is kept.

    Example:
        >>> teleport_shortcut(["open door to hallway", "go to hallway", "go to kitchen",
        ...                    "look around", "focus on apple"])
        ['teleport to kitchen', 'look around', 'focus on apple']
    """
    out: list[str] = []
    run: list[str] = []
    for command in [*gold, ""]:
        step = normalise(command)
        if step and (_DOOR.match(step) or _GO.match(step)):
            run.append(step)
            continue
        rooms = [m.group(1) for m in map(_GO.match, run) if m]
        out.extend([f"teleport to {rooms[-1]}"] if rooms else run)
        run = []
        if command:
            out.append(command)
    return out


_MOVE = re.compile(r"^move (.+) to (.+)$")
_PICK = re.compile(r"^pick up (.+)$")
_FOCUS = re.compile(r"^focus on (.+)$")


def short_final_move(gold: list[str]) -> list[str]:
    """``gold`` with its last command, where that is ``move <thing> to <place>``, naming the thing
    as the plan's last ``pick up`` (else ``focus on``) command named it, where ``<thing>`` holds
    that name (``egg common toad in inventory`` after ``pick up common toad``) or is the one
    thing the plan picked up (``living thing in inventory``, as upstream's gold says it on some
    find-living-thing variations).

    Upstream's gold agent names the thing it carries as the valid-action list does, by a referent
    unique in the final room: ``move flower pot 9 containing apple tree and soil in inventory to
    orange box`` after ``pick up flower pot 9``. The simulator takes the shorter name too (the
    thing is the same object; tested on the find tasks: every one still wins). A policy that
    copies the name from its recent history can then write the final move; the long one asks it
    to recall what the pot held from several steps back.

    Example:
        >>> short_final_move(["focus on adult apple tree", "pick up flower pot 9",
        ...                   "teleport to bathroom",
        ...                   "move flower pot 9 containing apple tree and soil in inventory to "
        ...                   "orange box"])[-1]
        'move flower pot 9 to orange box'
    """
    last = _MOVE.match(normalise(gold[-1])) if gold else None
    earlier = [normalise(command) for command in gold[:-1]]
    picked = [m.group(1) for m in map(_PICK.match, earlier) if m]
    focused = [m.group(1) for m in map(_FOCUS.match, earlier) if m]
    name = (picked or focused or [None])[-1]
    if last is None or name is None:
        return list(gold)  # nothing to shorten
    thing = last.group(1)
    carried = len(picked) == 1 and thing.endswith(" in inventory")  # the one thing picked up
    if not (carried or re.search(rf"\b{re.escape(name)}\b", thing)):
        return list(gold)  # the move is about something else
    return [*gold[:-1], f"move {name} to {last.group(2)}"]


@dataclass
class ExpertPath:
    """Tracks the upstream gold sequence while the agent follows it, keeping it replayable.

    While every accepted command equals the next expert action (case and spacing ignored), the
    remaining plan solves the task from the current state. After the first deviation no
    expert plan for the current state is known (the simulator only plans from a task's start), so
    :attr:`plan` is ``None``; :attr:`full` still holds the whole sequence from the start.
    Commands the simulator rejects never reach the tracker, so they do not count as deviations.

    Upstream's gold sequences answer "Ambiguous request" prompts with a bare number where the
    gold agent met them; a replay can meet them one step earlier or later (which objects match a
    name depends on where seeds and plants have been moved, e.g. in the Mendelian-genetics
    tasks). So the plan is aligned to the prompts the replay actually gets: a gold answer with no
    prompt pending is skipped, and a prompt the gold sequence does not answer at that point gets
    :data:`FIRST_CHOICE` (upstream's own choice) before the next gold action.
    """

    full: list[str]
    aliases: list[str | None] = field(default_factory=list)
    """Optional, parallel to :attr:`full`: other words for the same action (upstream's gold
    words where :attr:`full` holds the valid-action list's), also taken as following the plan."""
    position: int = 0
    on_path: bool = True
    deviations: list[str] = field(default_factory=list)
    awaiting_choice: bool = False

    def _skip_stale_choices(self) -> None:
        if not self.awaiting_choice:
            while self.position < len(self.full) and is_choice(self.full[self.position]):
                self.position += 1

    def _inserts_choice(self) -> bool:
        return self.awaiting_choice and not (
            self.position < len(self.full) and is_choice(self.full[self.position])
        )

    def advance(self, command: str, observation: str = "") -> None:
        """Record an accepted command and the simulator's ``observation`` of it."""
        if not self.on_path:
            return
        if self.is_next(command):
            if not self._inserts_choice():
                self.position += 1
        else:
            self.on_path = False
            self.deviations.append(command)
            return
        self.awaiting_choice = observation.startswith(AMBIGUOUS_PREFIX)
        self._skip_stale_choices()

    def skip_rejected(self, command: str) -> None:
        """A gold ``command`` the simulator rejected: leave it out of the plan."""
        if self.on_path and self.is_next(command) and not self._inserts_choice():
            self.position += 1
            self._skip_stale_choices()

    def is_next(self, command: str) -> bool:
        """Whether ``command`` is the next expert action, or its alias (case and spacing
        ignored)."""
        nxt = self.next_action
        if nxt is None:
            return False
        if normalise(command) == normalise(nxt):
            return True
        alias = (self.aliases[self.position]
                 if not self._inserts_choice() and self.position < len(self.aliases) else None)
        return alias is not None and normalise(command) == normalise(alias)

    @property
    def plan(self) -> list[str] | None:
        """Remaining expert actions from the current state, or ``None`` once off the path."""
        if not self.on_path:
            return None
        rest = list(self.full[self.position :])
        return [FIRST_CHOICE, *rest] if self._inserts_choice() else rest

    @property
    def next_action(self) -> str | None:
        """Next expert action, or ``None`` (off the path, or the plan is used up)."""
        plan = self.plan
        return plan[0] if plan else None


def render_privileged_text(
    goal: dict[str, Any], plan: list[str] | None, on_path: bool | None
) -> str:
    """Natural-language rendering of the privileged facts, for a teacher prompt."""
    lines = [
        f"Task: {goal['task_name']} (variation {goal['variation']}).",
        goal["task_description"],
    ]
    done = goal.get("subgoals_done") or []
    pending = goal.get("subgoals_pending") or []
    if done or pending:
        lines.append("Required sub-goals already achieved: " + ("; ".join(done) or "none") + ".")
        lines.append(
            "Required sub-goals still to achieve, in order: " + ("; ".join(pending) or "none") + "."
        )
    optional = [g["description"] for g in goal.get("optional", []) if not g["done"]]
    if optional:
        lines.append("Helpful optional steps not yet done: " + "; ".join(optional) + ".")
    if plan is not None:
        if plan:
            lines.append(
                f"An expert solves the task from here in {len(plan)} actions: " + " | ".join(plan)
            )
        else:
            lines.append("The expert plan is complete.")
    elif on_path is False:
        lines.append("The agent has left the expert's path; no expert plan is known from here.")
    return "\n".join(lines)
