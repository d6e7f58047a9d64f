"""The base text environment: DESIGN.md §2 implemented once for every sdgym environment.

A concrete environment supplies only its engine, through a handful of hooks:

========================  ==================================================================
``_task_count(split)``    how many tasks a split holds
``_start_task(split, i)`` load task ``i`` of ``split``; return the first observation
``_engine_step(action)``  apply a cleaned, non-empty command; return :class:`EngineStep`, or
                          raise :class:`InvalidAction` (the world must then be unchanged)
``_task_id/_task_type``   stable identifiers of the current task
``_admissible_actions``   list of commands valid now, or ``None`` where the env has none
``_privileged_info``      dict with ``expert_plan``, ``expert_action``, ``goal``, ``text``
``_release``              free engine resources (JVMs, browsers, servers, temp dirs)
========================  ==================================================================

Optional hooks (declared here with their defaults; an env overrides what it has):

=============================  =============================================================
``candidate_actions(obs, i)``  the env's own discrete action set now (Search-QA, WebShop), or
                               ``None`` (default): then the admissible list is used
``get_admissible_actions()``   admissible commands computed on request (ScienceWorld), or
                               ``None`` (default)
=============================  =============================================================

What agents need to know about an env, declared as class attributes (read by ``agents.prompts``
and ``baselines.skills`` through :func:`sdgym.registration.env_class`; no table elsewhere):

=====================  ==================================================================
``agent_role``         first sentence(s) of the agent's system prompt (required: ``""`` is
                       an error when a prompt is built)
``history_window``     observation/action pairs a student prompt keeps (default 2)
``skills``             per-task-type guidance texts with a ``"default"`` entry (required
                       for the ``skills`` teacher context; ``{}``: an error when asked for)
``task_statement_line`` which line of the first observation states the task (``0``, ``-1``);
                       ``None`` (default): none does, and a prompt that repeats the task
                       statement (``rollout.prompt.repeat_task``) is an error
=====================  ==================================================================

:class:`TextEnv` turns those into the Gymnasium API: text spaces, the public ``info`` keys, the
privileged channel, deterministic task choice from ``(split, task_index)`` or ``(split, seed)``,
split slices and unions (``"val[:50%]"``, ``"easy_train[0:75]+easy_train[150:225]"``,
:mod:`sdgym.splits`; the hooks only ever see a whole split and its own task indices),
invalid-action handling that never raises, and idempotent ``close()``.

Example:
    >>> import gymnasium as gym, sdgym
    >>> env = gym.make("sdgym/SearchQA-v0", size="tiny")
    >>> obs, info = env.reset(seed=0, options={"split": "train"})
    >>> sorted(k for k in info if k != "privileged")[:3]
    ['action_valid', 'admissible_actions', 'score']
"""

from __future__ import annotations

import dataclasses
import os
import unicodedata
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from sdgym.spaces import UnicodeText, to_text
from sdgym.splits import parse_split

PUBLIC_INFO_KEYS: tuple[str, ...] = (
    "task_id",
    "task_type",
    "split",
    "admissible_actions",
    "won",
    "score",
    "action_valid",
)
"""Keys present in ``info`` after every ``reset`` and ``step`` of every sdgym env."""

PRIVILEGED_KEYS: tuple[str, ...] = ("expert_plan", "expert_action", "goal", "text")
"""Keys of ``info["privileged"]`` (each env fills what it can; missing ones are ``None``)."""


class InvalidAction(Exception):
    """Raised by an engine hook for a command it cannot apply; the message is shown to the agent."""


@dataclass
class EngineStep:
    """What an engine returns for one valid command.

    Attributes:
        observation: the text the agent sees next.
        score: cumulative task score in ``[0, 1]`` after this command.
        done: whether the episode has ended (task solved, failed or answered).
        won: whether the task is solved.
        info: extra env-specific public info keys.
    """

    observation: str
    score: float
    done: bool = False
    won: bool = False
    info: dict[str, Any] = field(default_factory=dict)


def task_index_from_seed(seed: int, split: str, num_tasks: int) -> int:
    """Task index chosen by ``seed`` in ``split``: a pure, platform-independent function."""
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(split.encode())])
    return int(rng.integers(num_tasks))


def reset_options(options: Any) -> dict[str, Any]:
    """A copy of ``reset(options=...)``: a dict, or ``None`` for none; TypeError for anything else
    (``options="train"`` would otherwise fail deep inside ``dict()``)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError("reset options must be a dict such as {'split': 'test', 'task_index': 0}, "
                        f"got {type(options).__name__} {options!r}")
    return dict(options)


def clean_action(action: Any, max_length: int) -> tuple[str | None, str | None]:
    """Return ``(command, None)`` for a usable command, or ``(None, reason)`` for an invalid one.

    Control characters are removed, whitespace runs collapse to one space, and the result is
    stripped; a non-string, an empty string or one longer than ``max_length`` is invalid.
    """
    if isinstance(action, bytes):
        action = action.decode("utf-8", errors="replace")
    if not isinstance(action, str):
        return None, f"actions must be text, got {type(action).__name__}"
    if len(action) > max_length:
        return None, f"the action is {len(action)} characters long; the limit is {max_length}"
    printable = "".join(
        " " if char.isspace() else char
        for char in action
        if char.isspace() or unicodedata.category(char)[0] != "C"
    )
    command = " ".join(printable.split())
    if not command:
        return None, "the action is empty"
    return command, None


def json_safe(value: Any) -> Any:
    """``value`` with every ``os.PathLike`` (at any depth of dicts, lists and tuples) as a string."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(json_safe(item) for item in value)
    return value


class TextEnv(gym.Env[str, str]):
    """Base class of the sdgym environments (see the module docstring for the hooks).

    Args:
        privileged: put ``info["privileged"]`` in every info dict (training-time only).
        render_mode: ``"ansi"`` (``render()`` returns the last observation) or ``"human"``
            (prints it).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 4}
    splits: ClassVar[tuple[str, ...]] = ("train", "val", "test")
    easy_splits: ClassVar[dict[str, str]] = {}
    """The env's easy curriculum splits (a subset of :attr:`splits`), each with the role it plays:
    ``"train"``, ``"val"`` or ``"test"`` (e.g. ``{"easy_train": "train", "easy_val": "val"}``).
    Tiny warm starts train and are evaluated on them; the splits of one env are disjoint."""
    max_observation_length: ClassVar[int] = 32_768
    max_action_length: ClassVar[int] = 2_048
    native_action_tags: ClassVar[tuple[str, ...]] = ()
    """Tags the env parses itself (e.g. SearchQA's ``search``/``answer``); ``()`` for plain commands."""
    agent_role: ClassVar[str] = ""
    """The agent's role in its system prompt, e.g. ``"You are an agent in a household."``."""
    history_window: ClassVar[int] = 2
    """Observation/action pairs kept in a student prompt (METHODS.md)."""
    task_statement_line: ClassVar[int | None] = None
    """Which line of the first observation states the task (``0``, ``-1``): what
    ``rollout.prompt.repeat_task`` repeats; ``None``: no line does."""
    skills: ClassVar[dict[str, str]] = {}
    """Task type → guidance text for the ``skills`` teacher context, plus a ``"default"`` entry
    for task types without their own text."""

    @property
    def spec(self) -> gym.envs.registration.EnvSpec | None:
        """The env's spec (set by ``gym.make``), with its ``kwargs`` made JSON-safe: paths given
        as ``pathlib.Path`` (e.g. ALFWorld's ``data_path={"train": Path(...)}``) are kept as
        strings, so ``spec.to_json()`` and ``gym.make(EnvSpec.from_json(...))`` work."""
        return self.__dict__.get("_spec")

    @spec.setter
    def spec(self, value: gym.envs.registration.EnvSpec | None) -> None:
        if value is not None and value.kwargs:
            value = dataclasses.replace(value, kwargs=json_safe(value.kwargs))
        self.__dict__["_spec"] = value

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "task_count" in cls.__dict__ and "_task_count" not in cls.__dict__:
            raise TypeError(f"{cls.__qualname__} overrides task_count; the engine hook is "
                            "_task_count(split) (task_count adds split slices on top of it)")

    def __new__(cls, *args: Any, **kwargs: Any) -> TextEnv:
        env = super().__new__(cls)
        env._constructor = (args, kwargs)  # what a pickled copy is rebuilt from
        return env

    def __init__(self, *, privileged: bool = True, render_mode: str | None = None) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self.privileged = bool(privileged)
        self.render_mode = render_mode
        self.observation_space = UnicodeText(max_length=self.max_observation_length)
        self.action_space = UnicodeText(max_length=self.max_action_length)
        self._split: str | None = None
        self._task_index: int | None = None
        self._score = 0.0
        self._won = False
        self._done = False
        self._last_observation = ""
        self._closed = False
        self._ready = False  # a reset succeeded and nothing closed the env since
        self._actions: list[Any] = []  # since the last reset: what a pickled copy replays
        self._last_info: dict[str, Any] | None = None

    # ------------------------------------------------------------------ hooks
    def _task_count(self, split: str) -> int:
        """Number of tasks in ``split`` (one of :attr:`splits`)."""
        raise NotImplementedError

    def _start_task(self, split: str, task_index: int) -> str:
        raise NotImplementedError

    def _engine_step(self, command: str) -> EngineStep:
        raise NotImplementedError

    def _task_id(self) -> str:
        raise NotImplementedError

    def _task_type(self) -> str:
        raise NotImplementedError

    def _admissible_actions(self) -> list[str] | None:
        return None

    def _privileged_info(self) -> dict[str, Any]:
        return {}

    def _release(self) -> None:
        """Free engine resources; called once by :meth:`close`."""

    # --------------------------------------------------------- optional hooks
    def candidate_actions(self, observation: str, info: dict[str, Any]) -> list[str] | None:
        """The env's own discrete action set for this state; ``None``: it has none (the
        admissible list stands in)."""
        del observation, info
        return None

    def get_admissible_actions(self) -> list[str] | None:
        """Admissible commands computed on request; ``None``: not available."""
        return None

    @classmethod
    def check_split(cls, split: str) -> None:
        """Raise ValueError naming ``split`` and this env's splits unless it is one of them or
        a slice or union of them (``"val[:50%]"``, :mod:`sdgym.splits`); a class method: a command
        checks its ``--split`` before it builds anything."""
        for base in parse_split(split).bases:
            if base not in cls.splits:
                raise ValueError(f"unknown split {base!r}; this env has {list(cls.splits)}")

    def task_count(self, split: str) -> int:
        """Number of tasks in ``split``: a split of this env, a slice of one or a union of
        pieces (:mod:`sdgym.splits`)."""
        self.check_split(split)
        return parse_split(split).count(self._task_count)

    # ------------------------------------------------------------ gym API
    @property
    def split(self) -> str | None:
        """Split of the current task (``None`` before the first reset); after a reset on a
        slice or union (``"val[:50%]"``), the split the task is cut from."""
        return self._split

    @property
    def task_index(self) -> int | None:
        """Index of the current task within :attr:`split` (``None`` before the first reset)."""
        return self._task_index

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a task. ``options``: ``split`` (default ``"train"``) and ``task_index``, or
        ``task_index_by_seed`` (``{seed: task_index}``: lets one vector-env reset, whose options
        every sub-env shares, put each sub-env on its own task by its seed)."""
        super().reset(seed=seed)
        if self._closed:
            raise RuntimeError("this environment is closed; make a new one")
        options = reset_options(options)
        split = options.pop("split", "train")
        task_index = options.pop("task_index", None)
        by_seed = options.pop("task_index_by_seed", None)
        if by_seed is not None:
            if task_index is not None:
                raise ValueError("give task_index or task_index_by_seed, not both")
            if seed is None or int(seed) not in by_seed:
                raise ValueError(f"task_index_by_seed has no task for seed {seed!r}")
            task_index = by_seed[int(seed)]
        self.check_split(split)
        name = parse_split(split)
        num_tasks = name.count(self._task_count)
        if num_tasks <= 0:
            raise ValueError(f"split {split!r} has no tasks")
        if task_index is None:
            if seed is not None:
                task_index = task_index_from_seed(seed, split, num_tasks)
            else:
                task_index = int(self.np_random.integers(num_tasks))
        elif not isinstance(task_index, (int, np.integer)) or not 0 <= task_index < num_tasks:
            raise ValueError(
                f"task_index must be an int in [0, {num_tasks}) for split {split!r}, "
                f"got {task_index!r}"
            )
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; use split, task_index "
                             "(or task_index_by_seed)")
        self._ready = False
        self._split, self._task_index = name.task(int(task_index), self._task_count)
        self._score, self._won, self._done = 0.0, False, False
        self._actions = []
        observation = self._start_task(self._split, self._task_index)
        self._ready = True
        observation, info = self._observe(observation), self._info(action_valid=True)
        self._render_human()
        return observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Apply ``action``; any input is legal and invalid ones leave the world unchanged.

        Never raises: before a successful reset (e.g. after one that failed) and after
        ``close()`` every env answers with an invalid-action observation, reward 0 and
        ``terminated=True``, touching no engine."""
        if self._closed or not self._ready:
            return self._inert_step("this environment is closed; make a new one" if self._closed
                                    else "no task is running; call reset() first")
        self._actions.append(action)
        result = self._step(action)
        self._render_human()
        return result

    def _step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        command, problem = clean_action(action, self.max_action_length)
        if command is not None and self._done:
            command, problem = None, "the episode is over; call reset()"
        extra: dict[str, Any] = {}
        if command is not None:
            try:
                result = self._engine_step(command)
            except InvalidAction as error:
                problem = str(error) or "invalid action"
            else:
                score = float(np.clip(result.score, 0.0, 1.0))
                reward = score - self._score
                self._score = score
                self._won = self._won or bool(result.won)
                self._done = bool(result.done)
                extra = result.info
                observation = self._observe(result.observation)
                info = self._info(action_valid=True, **extra)
                return observation, reward, self._done, False, info
        observation = self._observe(f"Invalid action: {problem}. Nothing happened.")
        return observation, 0.0, self._done, False, self._info(action_valid=False)

    def _inert_step(self, problem: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        info = dict(self._last_info or {"task_id": None, "task_type": None, "split": None,
                                        "admissible_actions": None, "won": False, "score": 0.0})
        if info.get("admissible_actions") is not None:
            info["admissible_actions"] = []
        info["action_valid"] = False
        if self.privileged:
            info["privileged"] = dict.fromkeys(PRIVILEGED_KEYS)
        observation = f"Invalid action: {problem}. Nothing happened."
        return to_text(observation, self.max_observation_length), 0.0, True, False, info

    def _render_human(self) -> None:
        if self.render_mode == "human":
            self.render()

    def __reduce__(self) -> tuple:
        """Pickle (and ``copy.deepcopy``) as the constructor arguments, the RNG state, the
        current task and the actions taken since its reset: the copy is a new env (its own
        engine process) that replays them, so it continues exactly where this one is."""
        args, kwargs = self._constructor
        position = (self._split, self._task_index, list(self._actions)) if self._ready else None
        rng = self._np_random.bit_generator.state if self._np_random is not None else None
        return _rebuild_env, (type(self), args, kwargs, rng, position, self._closed)

    def render(self) -> str | None:
        """Return (``"ansi"``) or print (``"human"``) the last observation."""
        if self.render_mode == "ansi":
            return self._last_observation
        if self.render_mode == "human":
            print(self._last_observation)
        return None

    def close(self) -> None:
        """Release every process, server and temp dir the env started. Safe to call twice."""
        if not self._closed:
            self._closed = True
            self._release()
        super().close()

    # ------------------------------------------------------------ helpers
    def _observe(self, observation: str) -> str:
        self._last_observation = to_text(observation, self.max_observation_length)
        return self._last_observation

    def _info(self, *, action_valid: bool, **extra: Any) -> dict[str, Any]:
        info = self._engine_info(action_valid=action_valid, **extra)
        self._last_info = {k: info[k] for k in PUBLIC_INFO_KEYS}
        return info

    def _engine_info(self, *, action_valid: bool, **extra: Any) -> dict[str, Any]:
        info: dict[str, Any] = {
            "task_id": self._task_id(),
            "task_type": self._task_type(),
            "split": self._split,
            "admissible_actions": self._admissible_actions(),
            "won": self._won,
            "score": self._score,
            "action_valid": action_valid,
        }
        info.update(extra)
        if self.privileged:
            privileged = dict.fromkeys(PRIVILEGED_KEYS)
            privileged.update(self._privileged_info())
            info["privileged"] = privileged
        return info


def _rebuild_env(cls: type[TextEnv], args: tuple, kwargs: dict[str, Any], rng: dict | None,
                 position: tuple[str, int, list[Any]] | None, closed: bool) -> TextEnv:
    """Unpickle a :class:`TextEnv` (see ``TextEnv.__reduce__``)."""
    env = cls(*args, **kwargs)
    if position is not None:
        split, task_index, actions = position
        render_mode, env.render_mode = env.render_mode, None  # a replay prints nothing
        env.reset(options={"split": split, "task_index": task_index})
        for action in actions:
            env.step(action)
        env.render_mode = render_mode
    if rng is not None:
        env.np_random  # noqa: B018  (creates the generator)
        env._np_random.bit_generator.state = rng
    if closed:
        env.close()
    return env
