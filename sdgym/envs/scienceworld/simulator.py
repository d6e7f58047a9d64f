"""A fast, crash-proof session with the ScienceWorld simulator: load a task, step, query.

A session runs in a JVM of its own or in the process's shared JVM
(:mod:`sdgym.envs.scienceworld.shared_jvm`); both play identically.

Why not ``scienceworld.ScienceWorldEnv.step``: it always asks the simulator for the valid-action
list (60-180 ms, ~10x a step) and for three free look/inventory/task renderings. The observation,
score and completion it returns come only from ``PythonInterface.step``/``getScore``/
``getCompleted``; :meth:`Simulator.step` calls exactly those (plus ``getNumMoves``), so it sees the
same semantics at a fraction of the cost. Valid actions are fetched only by
:meth:`Simulator.valid_actions`.

Crash handling: the episode's accepted commands are recorded. If the JVM dies, :meth:`Simulator.step`
warns, starts a new JVM, reloads the task, replays the commands (the simulator is deterministic:
every load reseeds it from the variation index) and then runs the new command, reporting
``restarted=True``. Gold action sequences come from :mod:`.gold_cache` (the process's and the
disk's) when they can: generating one costs 0.1-2 s (10-16 s on the Mendelian genetics tasks).
"""

from __future__ import annotations

import contextlib
import logging
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sdgym.envs.scienceworld.gold_cache import (
    cached_gold,
    cached_plan,
    plan_key,
    remember_gold,
    remember_plan,
)
from sdgym.envs.scienceworld.jvm import GlobalRandom, JVMDied, SimulatorJVM
from sdgym.envs.scienceworld.plan_words import PLAN_FORMAT, Session, list_form_plan
from sdgym.envs.scienceworld.shared_jvm import SharedJVM, forget, shared_jvm
from sdgym.envs.scienceworld.valid_actions import (
    NO_MATCH,
    PARSER_ERROR,
    ValidAction,
    parse_valid_actions,
)

T = TypeVar("T")

log = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT_S = 60.0
"""Deadline of one simulator call (a step takes milliseconds; the slowest gold-path generation,
Mendelian genetics, 10-16 s). A JVM that does not answer in time is killed and restarted, and the
episode replayed."""


@dataclass(frozen=True)
class SimStep:
    """The simulator's answer to one command.

    Attributes:
        observation: text returned by the simulator.
        score: upstream integer score (``round(100 * score)``; negative when the task failed).
        completed: upstream completion flag (solved or failed).
        moves: simulator ticks since the task was loaded.
        restarted: the JVM died and was restarted (and the episode replayed) during this call.
    """

    observation: str
    score: int
    completed: bool
    moves: int
    restarted: bool = False


class Simulator:
    """One ScienceWorld simulator session, in a JVM of its own or in the process's shared JVM.

    Args:
        java_path: ``java`` executable; found automatically if ``None``.
        java_options: JVM options (default ``-Xmx512m -XX:+UseSerialGC`` for a JVM of its own,
            ``-Xmx1g -XX:+UseSerialGC`` for a shared one).
        call_timeout: deadline of every simulator call, in seconds.
        shared: borrow a session in the process's shared JVM
            (:mod:`sdgym.envs.scienceworld.shared_jvm`) instead of starting a JVM of its own.
    """

    def __init__(
        self, java_path: str | None = None, java_options: Sequence[str] | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT_S, shared: bool = False,
    ) -> None:
        if not call_timeout > 0:
            raise ValueError(f"call_timeout must be > 0 seconds, got {call_timeout!r}")
        self.call_timeout = float(call_timeout)
        self.shared = bool(shared)
        self._shut = False
        self._death = "died"
        self._java_path = java_path
        self._java_options = None if java_options is None else tuple(java_options)
        self._jvm: SimulatorJVM | None = None
        self._host: SharedJVM | None = None
        self._session: Any = None
        self._episode: tuple[str, int, str] | None = None
        self._history: list[str] = []
        self._last: SimStep | None = None
        self.task_description = ""
        self.restarts = 0
        self._random_state: int | None = None  # this session's generator state, while not held
        self._random_before: int | None = None  # the state before the next step

    # ---------------------------------------------------------------- JVM
    @property
    def jvm(self) -> SimulatorJVM | None:
        """The JVM this session runs in, or ``None`` before the first load / after :meth:`close`."""
        return self._jvm

    @property
    def session(self) -> Any:
        """This simulator's ``PythonInterface`` in its JVM (``None`` before the first load)."""
        return self._session

    def _interface(self) -> Any:
        if self._shut:
            raise JVMDied("the simulator was closed")
        if self._session is None:
            if self.shared:
                host = shared_jvm(self._java_path, self._java_options, self.call_timeout)
                self._host, self._jvm = host, host.jvm
                # a new session draws from the JVM's generator (its task makers' constructors):
                # the state of the session holding it stays as it was
                with host.lock, self._random_kept():
                    self._session = host.jvm.new_session()
            else:
                self._jvm = SimulatorJVM(self._java_path, self._java_options, self.call_timeout)
                self._session = self._jvm.interface
        return self._session

    @contextlib.contextmanager
    def _calls(self) -> Iterator[None]:
        """Hold the shared JVM's lock for a call sequence (nothing to hold on a JVM of its own),
        with this session's state in the JVM's random-number generator."""
        with self._host.lock if self._host is not None else contextlib.nullcontext():
            self._claim_random()
            yield

    def _random(self) -> GlobalRandom | None:
        return self._jvm.random if self._jvm is not None else None

    def _claim_random(self) -> None:
        """Put this session's state into the JVM's generator, saving the state of the session
        that held it (two calls, only when sessions take turns: one session costs nothing)."""
        random = self._random()
        if random is None:
            return
        holder = random.owner() if random.owner is not None else None
        if holder is self:
            return
        if holder is not None:
            holder._random_state = random.get()
        if self._random_state is not None:
            random.set(self._random_state)
        random.owner = weakref.ref(self)

    @contextlib.contextmanager
    def _random_kept(self) -> Iterator[None]:
        """Leave the generator as it was (inside :meth:`_calls`): what runs here (the valid-action
        list, which names some objects at random; an expert-plan check) changes nothing in the
        world. Without a readable generator there is nothing to keep."""
        random = self._random()
        state = random.get() if random is not None else None
        try:
            yield
        finally:
            if random is not None and state is not None:
                random.set(state)

    def _is_death(self, error: Exception) -> bool:
        from py4j.protocol import Py4JError, Py4JJavaError

        if isinstance(error, Py4JJavaError) or not isinstance(error, Py4JError | OSError):
            return False
        if self._jvm is None:
            return True
        self._death = "died"
        try:  # the process may still be exiting when the socket breaks
            self._jvm.process.wait(timeout=2)
        except Exception:  # alive but not answering within call_timeout: hung
            self._death = f"did not answer within {self.call_timeout:g} s and was killed"
            with contextlib.suppress(Exception):
                self._jvm.process.kill()
                self._jvm.process.wait(timeout=5)
        return True

    def _drop_jvm(self) -> int | None:
        """Let go of a dead (or hung and killed) JVM: a shared one is forgotten by every env."""
        pid = None
        if self._jvm is not None:
            pid = self._jvm.pid
            if self._host is not None:
                forget(self._host)
            else:
                self._jvm.close()
        self._jvm, self._host, self._session = None, None, None
        self._random_state = self._random_before = None
        return pid

    def close(self) -> None:
        """End this session: stop its own JVM, or hand the shared one back (it stays up)."""
        if self._host is not None:
            self._jvm.end_session(self._session)
            random = self._random()
            if random is not None and random.owner is not None and random.owner() is self:
                random.owner = None
            self._jvm, self._host, self._session = None, None, None
            self._random_state = self._random_before = None
        else:
            self._drop_jvm()
        self._episode = None

    def shutdown(self) -> None:
        """Stop for good: a step blocked meanwhile (another thread) ends with :class:`JVMDied`
        instead of starting a new JVM (on a JVM of its own at once, since it is stopped; on the
        shared JVM at the call's deadline)."""
        self._shut = True
        self.close()

    # ------------------------------------------------------------ episode
    def load(self, task: str, variation: int, simplifications: str, gold: bool) -> list[str] | None:
        """Load a task and take upstream's first step (``look around``).

        Returns the gold action sequence when ``gold`` is true (from the cache if possible).
        The first observation is then :attr:`last`.
        """
        for attempt in (0, 1):
            try:
                server = self._interface()
                with self._calls():
                    return self._load(server, task, variation, simplifications, gold)
            except Exception as error:
                if attempt or self._shut or not self._is_death(error):
                    raise
                pid = self._drop_jvm()
                self.restarts += 1
                warnings.warn(
                    f"the ScienceWorld JVM (pid {pid}) {self._death} during reset; started a "
                    "new one",
                    RuntimeWarning,
                    stacklevel=3,
                )
        raise AssertionError("unreachable")

    def _load(
        self, server: Any, task: str, variation: int, simplifications: str, gold: bool
    ) -> list[str] | None:
        key = (task, variation, simplifications, self._jvm.deterministic)
        sequence = cached_gold(key) if gold else None
        if gold and sequence is None:
            error = server.load(task, variation, simplifications, True)
            sequence = [str(action) for action in server.getGoldActionSequence()]
            remember_gold(key, sequence)
        else:
            error = server.load(task, variation, simplifications, False)
        if error:
            raise ValueError(f"ScienceWorld could not load {task}/{variation}: {error}")
        self._episode = (task, variation, simplifications)
        self._history = []
        self.task_description = str(server.getTaskDescription())
        self._last = self._raw_step(server, "look around")
        self._note_random()
        return list(sequence) if sequence is not None else None

    @property
    def last(self) -> SimStep:
        """The simulator's last answer (the first observation right after :meth:`load`)."""
        if self._last is None:
            raise RuntimeError("no task loaded")
        return self._last

    @staticmethod
    def _raw_step(server: Any, command: str) -> SimStep:
        observation = str(server.step(command))
        score = int(round(100 * float(server.getScore())))
        return SimStep(observation, score, bool(server.getCompleted()), int(server.getNumMoves()))

    def _checked_step(self, server: Any, command: str) -> SimStep:
        """One step (inside :meth:`_calls`); a rejected command leaves the random-number
        generator as it was (the parser draws from it), so it changes nothing at all. The state
        to go back to is read after each accepted step and load (nothing between two steps
        draws from the generator), so the step itself is the first call into the JVM."""
        result = self._raw_step(server, command)
        self._note_random(rejected=result.observation in (NO_MATCH, PARSER_ERROR))
        return result

    def _note_random(self, rejected: bool = False) -> None:
        """Remember the generator's state after a load or an accepted step, or put it back
        after a rejected step."""
        random = self._random()
        if random is None:
            return
        if rejected and self._random_before is not None:
            random.set(self._random_before)
        else:
            self._random_before = random.get()

    def step(self, command: str) -> SimStep:
        """Send one command; restart and replay the episode if the JVM has died."""
        if self._episode is None:
            raise RuntimeError("no task loaded")
        try:
            server = self._interface()
            with self._calls():
                result = self._checked_step(server, command)
        except Exception as error:
            if not self._is_death(error):
                raise
            self._recover()
            server = self._interface()
            with self._calls():
                result = self._checked_step(server, command)
            result = SimStep(result.observation, result.score, result.completed, result.moves, True)
        if result.observation not in (NO_MATCH, PARSER_ERROR):
            self._history.append(command)
        self._last = result
        return result

    def _recover(self) -> None:
        """Start a new JVM and bring it to the state the dead one was in."""
        if self._shut or self._episode is None:
            raise JVMDied("the simulator was closed during this call")
        pid = self._drop_jvm()
        self.restarts += 1
        task, variation, simplifications = self._episode
        history, expected = list(self._history), self._last
        try:
            server = self._interface()
            with self._calls():
                error = server.load(task, variation, simplifications, False)
                if error:
                    raise JVMDied(f"could not reload {task}/{variation} after a JVM crash: {error}")
                state = self._raw_step(server, "look around")
                for command in history:
                    state = self._raw_step(server, command)
                self._note_random()
        except JVMDied:
            raise
        except Exception as error:  # the new JVM failed too (or the env was closed meanwhile)
            raise JVMDied(f"could not replay {task}/{variation} after a JVM crash: "
                          f"{type(error).__name__}") from None
        self._history = history
        same = expected is None or (state.score, state.moves) == (expected.score, expected.moves)
        warnings.warn(
            f"the ScienceWorld JVM (pid {pid}) {self._death} mid-episode; started a new one and "
            "replayed "
            f"the episode's {len(history)} commands"
            + ("" if same else " (WARNING: the replayed state differs)"),
            RuntimeWarning,
            stacklevel=4,
        )
        if not same:
            raise JVMDied("the replayed episode diverged from the original after a JVM crash")

    # ------------------------------------------------------------ queries
    def _query(self, call: Callable[[Any], T]) -> T:
        try:
            server = self._interface()
            with self._calls():
                return call(server)
        except Exception as error:
            if self._episode is None or not self._is_death(error):
                raise
            self._recover()
            server = self._interface()
            with self._calls():
                return call(server)

    def valid_actions(self) -> list[str]:
        """Valid action-object combinations now, in upstream's order (sorted).

        Upstream's ``getValidActionObjectCombinations`` returns a sorted Java list that py4j reads
        back one element per round trip. The JSON variant carries the same strings in one string
        but unsorted; sorting it here gives the identical list about 3x faster.
        """
        return [action.text for action in self.valid_action_entries()]

    def valid_action_entries(self) -> list[ValidAction]:
        """The valid actions now with their template and object ids, sorted by text.

        The list names some objects at random (upstream draws from the JVM's one generator); the
        generator is put back afterwards, so asking for the list changes nothing in the world
        and asking twice gives the same names."""

        def entries(server: Any) -> list[ValidAction]:
            with self._random_kept():
                return parse_valid_actions(str(server.getValidActionObjectCombinationsJSON()))

        return self._query(entries)

    def expert_plan(self, gold: list[str]) -> tuple[list[str], list[str | None]]:
        """``gold`` (a plan from the loaded task's start) in the valid-action list's words, and
        for each of its actions the gold words it replaces where they differ (``None`` where
        they do not): :func:`~sdgym.envs.scienceworld.plan_words.list_form_plan`, cached like gold
        sequences. The session's world and generator are left as they were. If the rewrite
        fails (it never has on the upstream tasks), ``gold`` is returned unchanged, with a
        warning in the log."""
        if self._episode is None:
            raise RuntimeError("no task loaded")
        task, variation, simplifications = self._episode
        self._interface()
        key = plan_key(task, variation, simplifications, self._jvm.deterministic, list(gold),
                       PLAN_FORMAT)
        record = cached_plan(key)
        if record is None:
            try:
                record = self._rewrite_plan(task, variation, simplifications, gold)
            except Exception as error:
                if self._is_death(error):
                    self._recover()
                log.warning("could not put the expert plan of %s/%s in the valid-action list's "
                            "words (%s: %s); the expert uses upstream's words",
                            task, variation, type(error).__name__, error)
                return list(gold), [None] * len(gold)
            remember_plan(key, record)
        return list(record["plan"]), list(record["aliases"])

    def _rewrite_plan(self, task: str, variation: int, simplifications: str,
                      gold: list[str]) -> dict[str, Any]:
        jvm = self._jvm
        sessions: list[Any] = []
        with self._calls(), self._random_kept():  # creating the sessions draws from it too
            try:
                sessions += [jvm.new_session(), jvm.new_session()]
                ref, twin = (Session(server, self._random()) for server in sessions)
                result = list_form_plan(ref, twin, task, variation, simplifications, gold)
                if self._random() is None:  # the plan's loads reseeded the shared generator
                    self._replay_episode()
            finally:
                for server in sessions:
                    jvm.end_session(server)
        return {"plan": result.plan, "aliases": result.aliases, "counts": result.summary()}

    def _replay_episode(self) -> None:
        """Reload the episode and replay its commands (inside :meth:`_calls`)."""
        task, variation, simplifications = self._episode
        server = self._session
        server.load(task, variation, simplifications, False)
        self._raw_step(server, "look around")
        for command in self._history:
            self._raw_step(server, command)

    def inventory(self) -> str:
        """What ``inventory`` would say, without a step (no time passes)."""
        return self._query(lambda s: str(s.freeActionInventory()))

    def goal_progress(self) -> str:
        """Upstream goal-progress text (sequential and optional sub-goals, done or not)."""
        return self._query(lambda s: str(s.getGoalProgressStr()))

    def history(self) -> list[str]:
        """Commands of the current episode that the simulator accepted."""
        return list(self._history)
