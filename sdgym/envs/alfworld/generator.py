"""Generate ALFWorld games (upstream file format) for ``(split, index)``, lazily and cached.

:func:`build_game` draws a scene (:mod:`.scene`) and writes its PDDL problem (:mod:`.problem`).
fast-downward plans on the scene's task view (:func:`~.scene.task_view`: only the entities the
task needs, so the blind search stays small in any room); the plan is then replayed on the whole
game on TextWorld's PDDL engine and the game is kept only if the replay wins. Both run in a
forked child under a memory cap (:mod:`.capped`). The plan is stored as ``walkthrough``. A draw whose room
cannot host the task, whose planning exceeds its cap, or whose plan does not win is *redrawn*:
the next candidate spec of :func:`~.splits.task_specs` (a fixed sub-seed sequence), so every
index gets a game and the choice is the same on every machine.

:func:`game_folder` returns ``$SDGYM_CACHE/alfworld/v<version>[-small]/<split>/<index>``,
generating it under a file lock the first time (a few seconds) and writing it atomically (a
crash leaves no half-written entry). Generation is deterministic: the same bytes on every run.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from sdgym.cache import atomic_directory, cache_dir, file_lock, usable_entry
from sdgym.envs.alfworld import speedups
from sdgym.envs.alfworld.capped import PlanLimits, PlanningLimitExceeded, run_capped
from sdgym.envs.alfworld.engine import reset_game, start_game, step_game
from sdgym.envs.alfworld.game_io import GAME_FILE, GameFiles, game_logic, read_game, write_game
from sdgym.envs.alfworld.layouts import floor_plan
from sdgym.envs.alfworld.problem import pddl_problem
from sdgym.envs.alfworld.scene import Scene, SceneError, sample_scene, task_view
from sdgym.envs.alfworld.splits import (
    GENERATOR_VERSION,
    TaskSpec,
    canonical_split,
    split_config,
    task_specs,
)

PLAN_LIMITS = PlanLimits()
"""Cap of one generation-time planner call (module attribute so tests can shrink it)."""


class GenerationError(RuntimeError):
    """No candidate spec of a task index produced a solvable game."""


def scene_from_spec(spec: TaskSpec) -> Scene:
    """The scene of one spec (raises :class:`SceneError` if the room can't host the task)."""
    config = spec.config
    return sample_scene(
        floor_plan(spec.floor_plan),
        spec.task_type,
        spec.seed,
        max_receptacles=config.max_receptacles,
        max_distractor_types=config.max_distractor_types,
        max_instances=config.max_instances,
    )


def game_name(spec: TaskSpec) -> str:
    """PDDL problem name and ``task_id`` of a spec's game."""
    suffix = "" if spec.size == "full" else f"_{spec.size}"
    return f"sdgym_{spec.split}_{spec.index}{suffix}"


def scene_game(scene: Scene, name: str) -> dict[str, Any]:
    """The ``game.tw-pddl`` document of a scene (unverified, no walkthrough)."""
    domain, grammar = game_logic()
    return {
        "pddl_domain": domain,
        "pddl_problem": pddl_problem(scene, name),
        "grammar": grammar.replace("UNKNOWN GOAL", scene.goal_template),
        "solvable": False,
    }


def game_from_spec(spec: TaskSpec, scene: Scene | None = None) -> GameFiles:
    """The unverified game of one spec (raises :class:`SceneError` if the room can't host it);
    ``scene``: the spec's scene if already drawn."""
    scene = scene or scene_from_spec(spec)
    name = game_name(spec)
    game = scene_game(scene, name)
    traj = {
        "task_id": name,
        "task_type": scene.task_type,
        "pddl_params": scene.pddl_params,
        "scene": {
            "floor_plan": scene.floor_plan.name,
            "scene_num": scene.floor_plan.number,
            "random_seed": spec.seed,
        },
        "turk_annotations": {
            "anns": [{"task_desc": scene.goal_template[:1].upper() + scene.goal_template[1:] + "."}]
        },
        "sdgym": {
            "split": spec.split,
            "index": spec.index,
            "size": spec.size,
            "attempt": spec.attempt,
            "generator_version": GENERATOR_VERSION,
        },
    }
    return GameFiles(game, traj)


def plan_and_replay(game: dict[str, Any], view_game: dict[str, Any]) -> list[str] | None:
    """fast-downward's plan for ``view_game`` (a task view of ``game``) as ``game``'s commands
    (its own numbering of "cabinet 3"), if replaying it wins ``game``; else ``None``."""
    return planned_walkthrough(game, view_game).get("walkthrough")


def planned_walkthrough(game: dict[str, Any], view_game: dict[str, Any]) -> dict[str, Any]:
    """:func:`plan_and_replay` as ``{"walkthrough": [...]}``, or ``{"failure": why}`` where the
    plan does not win ``game`` (:func:`replay_failure`)."""
    env = start_game(game)
    try:
        view = start_game(view_game)
        try:
            reset_game(view)
            with speedups.patched():
                walkthrough = list(view.unwrapped._pddl_state.replan(env.unwrapped._entity_infos))
        finally:
            view.close()
        failure = replay_failure(env, walkthrough)
        return {"walkthrough": walkthrough} if failure is None else {"failure": failure}
    finally:
        env.close()


def replay_failure(env: Any, walkthrough: list[str]) -> str | None:
    """Why ``walkthrough`` does not win ``env``'s game from reset, each command admissible when
    played; ``None`` if it does. A game already won at reset (goal true in the initial state)
    does not count."""
    state = reset_game(env)
    if state["won"]:
        return "the goal holds at reset"
    if not walkthrough:
        return "the planner found no plan"
    for command in walkthrough:
        if command not in state["admissible_commands"]:
            return "a planned command is not admissible on the whole game"
        state = step_game(env, command)
    return None if state["won"] else "the plan ends without winning the whole game"


def solve(spec: TaskSpec, limits: PlanLimits | None = None) -> GameFiles | None:
    """The verified game of ``spec`` with its walkthrough, or ``None`` (the caller redraws):
    :func:`solve_with_reason` without the reason."""
    outcome = solve_with_reason(spec, limits)
    return outcome if isinstance(outcome, GameFiles) else None


def solve_with_reason(spec: TaskSpec, limits: PlanLimits | None = None) -> GameFiles | str:
    """The verified game of ``spec`` with its walkthrough, or why there is none (the caller
    redraws).

    Planning and replay run in a capped child (:func:`~.capped.run_capped`), so the caller's
    process loads no engine. Raises :class:`SceneError` if the room can't host the task."""
    scene = scene_from_spec(spec)
    files = game_from_spec(spec, scene)
    view_game = scene_game(task_view(scene), game_name(spec))
    try:
        planned = run_capped(
            lambda: planned_walkthrough(files.game, view_game), limits or PLAN_LIMITS
        )
    except PlanningLimitExceeded as error:
        return str(error)
    if "walkthrough" not in planned:
        return str(planned["failure"])
    walkthrough = planned["walkthrough"]
    return GameFiles({**files.game, "solvable": True, "walkthrough": walkthrough}, files.traj)


def build_game(split: str, index: int, size: str = "full") -> GameFiles:
    """Generate and verify the game of ``(split, index)`` (deterministic)."""
    reasons: Counter[str] = Counter()
    for spec in task_specs(split, index, size):
        try:
            outcome = solve_with_reason(spec)
        except SceneError:
            reasons["the room could not host the task"] += 1
            continue
        if isinstance(outcome, GameFiles):
            return outcome
        reasons[outcome] += 1
    shown = reasons.most_common(3)
    summary = "; ".join(f"{count}x {reason}" for reason, count in shown)
    others = sum(reasons.values()) - sum(count for _, count in shown)
    if others:
        summary += f"; {others}x other reasons"
    raise GenerationError(
        f"no solvable game for {split!r} task {index} ({size} rooms) in "
        f"{sum(reasons.values())} draws: {summary}"
    )


def cache_root(split: str, size: str = "full") -> Path:
    """Cache folder of one split's generated games."""
    split_config(split, size)  # validates both
    version = f"v{GENERATOR_VERSION}" + ("" if size == "full" else f"-{size}")
    return cache_dir("alfworld", version, canonical_split(split))


def game_folder(split: str, index: int, size: str = "full") -> Path:
    """Folder of the game for ``(split, index)``, generated on first use and cached."""
    split = canonical_split(split)
    root = cache_root(split, size)
    folder = root / f"{index:05d}"
    if usable_entry(folder, GAME_FILE):
        return folder
    with file_lock(root / f".{index:05d}.lock"):
        if not usable_entry(folder, GAME_FILE):
            files = build_game(split, index, size)
            with atomic_directory(folder) as staging:
                write_game(staging, files)
    return folder


def load_generated(split: str, index: int, size: str = "full") -> GameFiles:
    """The game files of ``(split, index)`` (generating them if needed)."""
    return read_game(game_folder(split, index, size))
