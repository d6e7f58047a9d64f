"""The expert plan in the words of ScienceWorld's valid-action list
(``ScienceWorldEnv(expert_words="list")``).

The list (:mod:`~sdgym.envs.scienceworld.valid_actions`) names each object by a referent unique
in the current state. Upstream's gold agent
names objects its own way -- "focus on thermometer in inventory", "open door to bathroom"
(listed as "open bathroom door"), "examine X" (listed as "look at X"), "connect battery anode
to X" (listed as "connect anode in battery to X" or the other way round), "drop X" (listed as
"put down X") -- answers "Ambiguous request" prompts with a number, and opens doors that are
already open or picks up what it holds (no-ops, which the list leaves out). So about one gold
action in five is not on the list although the list holds the same action (or the no-op is
not needed).

:func:`list_form_plan` rewrites a gold sequence into list words and verifies the rewrite in the
simulator: it plays the gold sequence in one session, recording every answer (observation,
score, completion), what the agent would then see around it and in its inventory, and the
valid-action list before each step; then it plays the rewrite in another session, accepting a
listed command for a gold step only where the simulator answers it exactly as it answered the
gold step and the surroundings and inventory are the same. A gold step and its prompt answer
become the one listed command that does the same (found by the object ids of the option the
answer chose). A step with no listed equivalent (a no-op) is left out where the rest of the plan
still replays identically, else replaced by a listed ``look at`` (which, like the no-op, only
lets one tick pass), else kept in the gold's words.

Sessions of one JVM share the simulator's random-number generator (bees fly at random, the list
names some objects at random): the caller gives the sessions the JVM's generator
(:class:`~sdgym.envs.scienceworld.jvm.GlobalRandom`), which every list and every rejected
command leaves as it was, and the gold replay finishes before the rewrite starts, each from a
load (which reseeds the generator), as an env's session does.

"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sdgym.envs.scienceworld.goal import AMBIGUOUS_PREFIX, FIRST_CHOICE, is_choice
from sdgym.envs.scienceworld.valid_actions import (
    FUNCTION_WORDS,
    NO_MATCH,
    NOT_THINGS,
    PARSER_ERROR,
    TOKEN,
    ValidAction,
    command_verb,
    normalise,
    parse_valid_actions,
)

PLAN_FORMAT = 1
"""Version of :func:`list_form_plan`'s output (part of its cache key: a new algorithm is a new
cache entry)."""


_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^examine "), "look at "),
    (re.compile(r"^drop "), "put down "),
    (re.compile(r" into "), " in "),
)


def _words(command: str) -> list[str]:
    text = normalise(command)
    for pattern, replacement in _REWRITES:
        text = pattern.sub(replacement, text)
    return TOKEN.findall(text)


_JOINTS = re.compile(r" (?:to|into|on) ")
_QUALIFIER = re.compile(r" (?:in|on) .*$")


def _core_words(command: str) -> set[str]:
    """The words of ``command`` without the places its objects are said to be in
    (``focus on thermometer in inventory`` -> focus, on, thermometer)."""
    text = " ".join(_words(command))
    verb = command_verb(text)
    parts = _JOINTS.split(text[len(verb):].strip(), maxsplit=1)
    return set(verb.split()) | {w for part in parts for w in _QUALIFIER.sub("", part).split()}


def alias_candidates(
    command: str, actions: Sequence[ValidAction], limit: int = 8, narrower: bool = False
) -> list[str]:
    """Listed commands that may be ``command`` in other words, most likely first.

    The same verb (after ``examine`` -> ``look at``, ``drop`` -> ``put down``, ``into`` ->
    ``in``) and no content word that ``command`` lacks (``anode in battery`` for ``battery
    anode``), unless ``narrower`` (``command`` met an "Ambiguous request", so the listed form
    may name its object more closely); then most words in common with ``command`` stripped of
    where its objects are (:func:`_core_words`), most words in common, the same last words
    (``... into jug``), fewest words of their own. Only the simulator can tell which (if any) is
    the same action."""
    words = _words(command)
    if not words:
        return []
    mine, core = set(words), _core_words(command)
    scored = []
    for action in actions:
        theirs = _words(action.text)
        if not theirs or theirs[0] != words[0] or normalise(action.text) == normalise(command):
            continue
        extra = len(set(theirs) - mine)
        if (set(theirs) - mine - FUNCTION_WORDS) and not narrower:
            continue
        common = len(mine & set(theirs))
        scored.append((-len(core & set(theirs)), -common, -_common_suffix(theirs, words), extra,
                       len(theirs), action.text))
    scored.sort()
    return [text for *_, text in scored[:limit]]


MAX_UNDONE = 2
"""Failed attempts per gold step that :func:`list_form_plan` undoes (each reloads the task and
replays the plan so far) before it gives up on that step."""

_ALWAYS_LISTED = re.compile(r"^(look around|inventory|task|wait\d*|go to .+|teleport to .+)$")
"""Commands that the list holds in these very words whenever the simulator accepts them (no
object, or a room, whose name is its unique referent): no need to fetch the list for them."""


@dataclass(frozen=True)
class Answer:
    """What the simulator said to a command."""

    observation: str
    score: int
    completed: bool

    @property
    def rejected(self) -> bool:
        return self.observation in (NO_MATCH, PARSER_ERROR)


class Session:
    """A simulator session (a ``PythonInterface``) as :func:`list_form_plan` uses it;
    ``random``: the JVM's generator (:class:`~sdgym.envs.scienceworld.jvm.GlobalRandom`), put
    back after every list, or ``None``."""

    def __init__(self, server: Any, random: Any = None) -> None:
        self.server = server
        self.random = random

    def load(self, task: str, variation: int, simplifications: str) -> None:
        error = self.server.load(task, variation, simplifications, False)
        if error:
            raise ValueError(f"ScienceWorld could not load {task}/{variation}: {error}")
        self.step("look around")

    def step(self, command: str) -> Answer:
        """Send ``command``; a rejected one leaves the generator as it was (as in the env)."""
        state = self.random.get() if self.random is not None else None
        observation = str(self.server.step(command))
        score = int(round(100 * float(self.server.getScore())))
        answer = Answer(observation, score, bool(self.server.getCompleted()))
        if answer.rejected and state is not None:
            self.random.set(state)
        return answer

    def valid_actions(self) -> list[ValidAction]:
        state = self.random.get() if self.random is not None else None
        actions = parse_valid_actions(str(self.server.getValidActionObjectCombinationsJSON()))
        if state is not None:
            self.random.set(state)
        return actions

    def prompt_options(self) -> list[tuple[int, ...]]:
        """The object ids of each option of the "Ambiguous request" just asked."""
        parser = self.server.agentInterface().get().inputParser()
        return [tuple(int(i) for i in option) for option in parser.getAmbiguousObjectIDs()]

    def state(self) -> str:
        """What the agent would see by looking around and at its inventory (no tick passes)."""
        return f"{self.server.freeActionLook()}\n{self.server.freeActionInventory()}"


@dataclass
class _GoldStep:
    commands: list[str]  # the gold command and the prompt answers it needed
    answer: Answer  # the simulator's answer to the last of them
    listed: list[ValidAction] | None  # the list before the step (None: not fetched)
    state: str  # Session.state() after the step
    chosen: tuple[int, ...] = ()  # object ids of the prompt option the gold answer chose


@dataclass
class PlanMapping:
    """What :func:`list_form_plan` found: the plan in list words and how each gold step fared."""

    plan: list[str]
    kept: int = 0
    """Gold steps already in list words."""
    renamed: int = 0
    """Gold steps (with their prompt answers) replaced by a listed command."""
    dropped: int = 0
    """Gold steps left out: no-ops, and commands the simulator rejects."""
    ticks: int = 0
    """No-ops replaced by a ``look at`` (one tick, like the no-op)."""
    unlisted: int = 0
    """Gold steps with no listed equivalent, kept in the gold's words."""
    aliases: list[str | None] = field(default_factory=list)
    """For each action of :attr:`plan`, the gold command it renames, where that command alone
    (no prompt) does the same; else ``None``."""

    def add(self, command: str, alias: str | None = None) -> None:
        self.plan.append(command)
        self.aliases.append(alias)

    def summary(self) -> dict[str, int]:
        return {"kept": self.kept, "renamed": self.renamed, "dropped": self.dropped,
                "ticks": self.ticks, "unlisted": self.unlisted}


class _Diverged(Exception):
    """The rewrite no longer replays as the gold sequence did."""


def _replay_gold(session: Session, gold: Sequence[str]) -> tuple[list[_GoldStep], int]:
    """Play ``gold`` as :class:`~sdgym.envs.scienceworld.goal.ExpertPath` does (rejected steps
    and answers with no prompt pending skipped, an unanswered prompt answered with
    :data:`FIRST_CHOICE`); return the steps and how many gold commands were skipped."""
    steps: list[_GoldStep] = []
    skipped = 0
    position = 0
    while position < len(gold):
        command = gold[position]
        position += 1
        if is_choice(command):  # an answer with no prompt pending
            skipped += 1
            continue
        listed = None if _ALWAYS_LISTED.match(normalise(command)) else session.valid_actions()
        answer = session.step(command)
        if answer.rejected:
            skipped += 1
            continue
        commands = [command]
        chosen: tuple[int, ...] = ()
        while answer.observation.startswith(AMBIGUOUS_PREFIX):
            reply = FIRST_CHOICE
            if position < len(gold) and is_choice(gold[position]):
                reply = gold[position]
                position += 1
            options = session.prompt_options()
            if len(commands) == 1 and int(reply) < len(options):
                chosen = options[int(reply)]
            commands.append(reply)
            answer = session.step(reply)
        steps.append(_GoldStep(commands, answer, listed, session.state(), chosen))
        if answer.completed:
            break
    return steps, skipped


def _common_suffix(a: list[str], b: list[str]) -> int:
    """How many words ``a`` and ``b`` end with in common (``move X to flower pot 7``: the
    destination, where the two objects of a prompt's option may come in either order)."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _tick_candidates(command: str, actions: Sequence[ValidAction], recent: Sequence[str]
                     ) -> list[str]:
    """Listed ``look at`` commands that may stand in for the no-op ``command``: they only let
    one tick pass. Looking at what the ``recent`` commands were about first (a probe a ranking
    of the agent's own commands offers), then at ``command``'s object (``look at door to
    hallway`` for an ``open door to hallway`` that finds it open), then at oneself."""

    def about(words: set[str]) -> list[str]:
        found = sorted((-len(words & set(w)), len(w), a.text) for a in actions
                       if a.text.startswith("look at ") and set(w := _words(a.text)) <= words
                       and normalise(a.text[len("look at "):]) not in NOT_THINGS)
        return [text for *_, text in found[:2]]

    looks = [text for c in reversed(recent[-2:]) for text in about(set(_words(c)) | {"look", "at"})]
    looks += about(set(_words(command)[1:]) | {"look", "at"})
    looks += [a.text for a in actions if a.text == "look at agent"]
    return list(dict.fromkeys(looks))


def _rewrite(
    twin: Session, load: Callable[[Session], None], steps: list[_GoldStep], noop: str
) -> PlanMapping:
    """One pass of the rewrite; ``noop``: ``"drop"``, ``"tick"`` or ``"keep"`` for a step with
    no listed equivalent. Raises :class:`_Diverged` when a step cannot be reproduced."""
    load(twin)
    result = PlanMapping(plan=[])
    played: list[str] = []  # the commands twin has played since its load
    undone = 0  # failed attempts at the current step that had to be undone

    def resync() -> None:
        load(twin)
        for command in played:
            twin.step(command)

    def attempt(command: str, step: _GoldStep, same: Callable[[Answer], bool]) -> list[str]:
        """Play ``command`` (and, if it meets a prompt, the option that names the objects the
        gold step's prompt answer chose); keep what ``same`` accepts, else undo it. Returns
        the commands kept."""
        nonlocal undone
        if undone >= MAX_UNDONE:
            return []
        commands = [command]
        answer = twin.step(command)
        if answer.observation.startswith(AMBIGUOUS_PREFIX) and step.chosen:
            options = [sorted(option) for option in twin.prompt_options()]
            if sorted(step.chosen) in options:
                commands.append(str(options.index(sorted(step.chosen))))
                answer = twin.step(commands[-1])
        if same(answer):
            played.extend(commands)
            return commands
        if not answer.rejected or len(commands) > 1:  # it did something else: undo it
            undone += 1
            resync()
        return []

    for step in steps:
        command = step.commands[0]
        undone = 0

        def exact(answer: Answer, step: _GoldStep = step) -> bool:
            return answer == step.answer and twin.state() == step.state

        def quiet(answer: Answer, step: _GoldStep = step) -> bool:
            return (answer.score, answer.completed) == (step.answer.score, step.answer.completed) \
                and not answer.observation.startswith(AMBIGUOUS_PREFIX) \
                and twin.state() == step.state

        single = len(step.commands) == 1
        texts = None if step.listed is None else {normalise(a.text) for a in step.listed}
        if single and (texts is None or normalise(command) in texts):
            if not attempt(command, step, exact):
                raise _Diverged(command)
            result.kept += 1
            result.add(command)
            continue
        listed = step.listed or []
        verb = _words(command)[:1]
        same_objects = sorted(
            (a.text for a in listed if step.chosen and _words(a.text)[:1] == verb
             and sorted(a.obj_ids) == sorted(step.chosen)),
            key=lambda text: -_common_suffix(_words(text), _words(command)))
        wider = [a for a in listed if len(a.obj_ids) == 1]  # pick up seed jar (containing ...)
        candidates = dict.fromkeys(
            same_objects + alias_candidates(command, listed, narrower=not single)
            + alias_candidates(command, wider, limit=MAX_UNDONE, narrower=True))
        mapped = next((kept for c in candidates if (kept := attempt(c, step, exact))), None)
        if mapped is not None:
            result.renamed += 1
            result.add(mapped[0], command if single and len(mapped) == 1 else None)
            for answer in mapped[1:]:
                result.add(answer)
            continue
        before = twin.state()
        if noop == "drop" and before == step.state and _score(twin) == step.answer.score:
            result.dropped += 1
            continue
        if noop in ("drop", "tick") and _DIGITS.sub("", before) == _DIGITS.sub("", step.state):
            undone = 0  # a budget of its own
            tick = next((c for c in _tick_candidates(command, listed, played)
                         if attempt(c, step, quiet)), None)
            if tick is not None:
                result.ticks += 1
                result.add(tick)
                continue
        for part in step.commands:
            answer = twin.step(part)
            played.append(part)
        if not exact(answer):
            raise _Diverged(command)
        result.unlisted += 1
        for part in step.commands:
            result.add(part)
    return result


_DIGITS = re.compile(r"\d+")


def _score(session: Session) -> int:
    return int(round(100 * float(session.server.getScore())))


def list_form_plan(
    ref: Session, twin: Session, task: str, variation: int, simplifications: str,
    gold: Sequence[str],
) -> PlanMapping:
    """``gold`` (a plan from the task's start) in the words of the valid-action list, verified
    in the simulator (see the module docstring); ``ref`` and ``twin`` are two sessions of one
    JVM, which nothing else steps meanwhile.

    Every command of the result is answered exactly as the gold step it replaces, with the
    same surroundings and inventory after it (a no-op left out or replaced by a ``look at``
    leaves those and the score as the no-op did), so following it ends as following ``gold``
    does. No-ops are left out where the whole rest of the plan still replays identically (not
    where a process runs on the clock, e.g. a thermometer warming up in the inventory); else a
    ``look at`` stands in for each; else the gold words stay. Gold commands the simulator
    rejects, and prompt answers with no prompt pending, are left out (as
    :class:`~sdgym.envs.scienceworld.goal.ExpertPath` skips them); the plan ends where the
    task completes."""

    def load(session: Session) -> None:
        session.load(task, variation, simplifications)

    load(ref)
    steps, skipped = _replay_gold(ref, gold)
    for noop in ("drop", "tick", "keep"):
        try:
            result = _rewrite(twin, load, steps, noop)
        except _Diverged:
            if noop == "keep":
                raise
            continue
        result.dropped += skipped
        return result
    raise AssertionError("unreachable")


__all__ = [
    "PLAN_FORMAT",
    "Answer",
    "PlanMapping",
    "Session",
    "ValidAction",
    "alias_candidates",
    "list_form_plan",
    "normalise",
    "parse_valid_actions",
]


# ---------------------------------------------------------------- candidate actions
