"""``sdgym/ALFWorld-v0``: ALFWorld (Shridhar et al., 2021) text games as an sdgym TextEnv.

Games run on alfworld's TextWorld PDDL path (the wheel's ``alfred.pddl`` domain and
``alfred.twl2`` grammar), so observations, admissible commands and command syntax are exactly
alfworld's. Games are generated from the wheel's 120 ALFRED floor plans (:mod:`.generator`,
splits in :mod:`.splits`), or read from official ALFWorld game folders (``data_path``).

Example:
    >>> import gymnasium as gym, sdgym
    >>> env = gym.make("sdgym/ALFWorld-v0")
    >>> obs, info = env.reset(options={"split": "easy", "task_index": 0})
    >>> obs.startswith("-= Welcome to TextWorld, ALFRED! =-")
    True
    >>> for action in info["privileged"]["expert_plan"]:
    ...     obs, reward, terminated, truncated, info = env.step(action)
    >>> info["won"], reward
    (True, 1.0)

Kwargs of ``gym.make``:
    data_path: official ALFWorld data (``json_2.1.1`` with ``train/``, ``valid_seen/`` = val,
        ``valid_unseen/`` = test, as alfworld's config maps them), a folder of game folders
        (``game.tw-pddl`` or ``initial_state.pddl`` + ``traj_data.json``) used for every split,
        or a dict ``{split: folder}`` (:mod:`.data_folders`). Checked at construction.
    size: ``"full"`` (default: the rooms of each split) or ``"small"`` (every split's rooms
        reduced to <= 6 receptacles and 3 distractor types, games generate in ~1 s; for tests).
    fast: memoise TextWorld's text generator (:mod:`.speedups`; identical trajectories), only
        inside this env's engine calls.
    privileged, render_mode: see :class:`~sdgym.core.TextEnv`.

Splits: ``train`` (3600), ``val_seen``/``val`` (140), ``val_unseen``/``test`` (134, held-out
floor plans), ``easy`` (600, small rooms), and the easy curriculum ``easy_train`` (1200) /
``easy_val`` (240) / ``easy_test`` (240): the two short task types in small rooms, on pairwise
disjoint floor plans (:mod:`.splits`). Reward: 1 when the task is won (the episode ends).

Info: DESIGN.md §2 public keys; ``task_id`` is ``alfworld/<split>/<index>-<hash>``.
``info["privileged"]``: ``goal`` (``task_type`` and ``pddl_params``: ``object_target``,
``parent_target``, ``toggle_target``, ``mrecep_target``, ``object_sliced``), ``expert_plan`` and
``expert_action`` from the current state (:mod:`.expert`), ``text`` (goal and plan in words).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from sdgym.core import EngineStep, InvalidAction, TextEnv
from sdgym.envs.alfworld import speedups
from sdgym.envs.alfworld.data_folders import split_folders
from sdgym.envs.alfworld.engine import (
    close_game,
    release_interned,
    reset_game,
    start_game,
    step_game,
)
from sdgym.envs.alfworld.expert import Expert
from sdgym.envs.alfworld.game_io import GameFiles, read_game
from sdgym.envs.alfworld.generator import load_generated
from sdgym.envs.alfworld.skills import SKILLS
from sdgym.envs.alfworld.splits import (
    ALIASES,
    EASY_SPLITS,
    SPLITS,
    canonical_split,
    split_config,
)


class ALFWorldEnv(TextEnv):
    """ALFWorld on TextWorld's PDDL engine; see the module docstring."""
    agent_role: ClassVar[str] = "You are an agent in a household. Complete the task."
    history_window: ClassVar[int] = 2
    skills: ClassVar[dict[str, str]] = SKILLS

    splits: ClassVar[tuple[str, ...]] = (*SPLITS, *ALIASES)
    easy_splits: ClassVar[dict[str, str]] = EASY_SPLITS

    def __init__(
        self,
        *,
        data_path: str | Path | dict[str, str | Path] | None = None,
        size: str = "full",
        fast: bool = True,
        privileged: bool = True,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(privileged=privileged, render_mode=render_mode)
        self.fast = bool(fast)
        split_config("train", size)  # rejects an unknown size
        self.size = size
        self._folders: dict[str, list[Path]] | None = None
        if data_path is not None:
            self._folders = split_folders(data_path)
        self._game: Any = None
        self._files: GameFiles | None = None
        self._expert: Expert | None = None
        self._state: Any = None
        self._loaded_key: tuple[str, int] | None = None

    # ------------------------------------------------------------------ hooks
    def _task_count(self, split: str) -> int:
        """Number of tasks in ``split`` (aliases allowed)."""
        split = canonical_split(split)
        if self._folders is not None:
            return len(self._folders.get(split, []))
        return SPLITS[split].size

    def _start_task(self, split: str, task_index: int) -> str:
        key = (canonical_split(split), task_index)
        loaded = key != self._loaded_key
        if loaded:
            self._loaded_key = None  # a failed load is retried on the next reset
            self._state = None  # the old game's last state holds its facts
            if self._folders is not None:
                self._files = read_game(self._folders[key[0]][task_index])
            else:
                self._files = load_generated(*key, size=self.size)
            self._game = start_game(self._files.game, fast=self.fast, env=self._game)
            self._expert = Expert(
                self._files.walkthrough,
                self._files.task_type,
                self._files.traj.get("pddl_params", {}),
            )
            self._loaded_key = key
        assert self._expert is not None
        self._expert.reset()
        self._state = reset_game(self._game, fast=self.fast)
        if loaded:  # the reset dropped the engine's last states of the previous game: its facts
            release_interned()  # leave TextWorld's interning table (engine.release_interned)
        return str(self._state.feedback)

    def _engine_step(self, command: str) -> EngineStep:
        admissible = {c.lower(): c for c in self._state["admissible_commands"]}
        if command.lower() not in admissible:  # any casing, as the other envs
            raise InvalidAction(f"{command!r} is not an admissible command here")
        command = admissible[command.lower()]
        self._state = step_game(self._game, command, fast=self.fast)
        assert self._expert is not None
        self._expert.observe(command)
        won = bool(self._state["won"])
        return EngineStep(str(self._state.feedback), score=float(won), done=won, won=won)

    def _task_id(self) -> str:
        assert self._files is not None and self._loaded_key is not None
        split, index = self._loaded_key
        return f"alfworld/{split}/{index}-{self._files.digest()}"

    def _task_type(self) -> str:
        assert self._files is not None
        return self._files.task_type

    def _admissible_actions(self) -> list[str]:
        return list(self._state["admissible_commands"])

    def _privileged_info(self) -> dict[str, Any]:
        assert self._files is not None
        plan = self.expert_plan()
        params = dict(self._files.traj.get("pddl_params", {}))
        goal = {"task_type": self._files.task_type, "pddl_params": params}
        return {
            "expert_plan": plan,
            "expert_action": plan[0] if plan else None,
            "goal": goal,
            "text": _privileged_text(self._files.task_type, params, plan),
        }

    def _release(self) -> None:
        self._close_game()

    # ------------------------------------------------------------ helpers
    def expert_plan(self) -> list[str]:
        """Commands that solve the current task from the current state."""
        assert self._expert is not None
        with speedups.patched(self.fast):
            return self._expert.plan(self._game.unwrapped, self._admissible_actions())

    def _close_game(self) -> None:
        game, self._game, self._state, self._loaded_key = self._game, None, None, None
        if game is not None:
            close_game(game)  # its libdownward copy goes back to the process's pool
            del game  # unreachable now, so its facts leave TextWorld's interning table
            release_interned()


def _privileged_text(task_type: str, params: dict[str, Any], plan: list[str]) -> str:
    """Goal parameters and the expert plan in words, for a teacher prompt."""
    parts = [f"Task type: {task_type.replace('_', ' ')}."]
    targets = [
        f"{label} {params[key]}"
        for key, label in (
            ("object_target", "object:"),
            ("parent_target", "destination:"),
            ("toggle_target", "light:"),
        )
        if params.get(key)
    ]
    if targets:
        parts.append("Goal " + ", ".join(targets) + ".")
    if plan:
        parts.append(f"Expert plan ({len(plan)} steps): " + "; ".join(plan) + ".")
    else:
        parts.append("The task is solved.")
    return " ".join(parts)
