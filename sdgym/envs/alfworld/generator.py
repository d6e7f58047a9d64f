"""Generate ALFWorld games (upstream file format) for ``(split, index)``, lazily and cached.

:func:`build_game` draws a scene (:mod:`.scene`), writes its PDDL problem (:mod:`.problem`),
loads it on TextWorld's PDDL engine, asks fast-downward for a plan, replays the plan and keeps
the game only if the replay wins; the plan is stored as ``walkthrough``. :func:`game_folder`
returns ``$SDGYM_CACHE/alfworld/v<version>/<split>/<index>``, generating it under a file lock the
first time (a few seconds). Generation is deterministic: the same bytes on every run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sdgym.cache import atomic_directory, cache_dir, file_lock
from sdgym.envs.alfworld.engine import reset_game, start_game
from sdgym.envs.alfworld.game_io import GAME_FILE, GameFiles, game_logic, read_game, write_game
from sdgym.envs.alfworld.layouts import floor_plan
from sdgym.envs.alfworld.problem import pddl_problem
from sdgym.envs.alfworld.scene import SceneError, sample_scene
from sdgym.envs.alfworld.splits import GENERATOR_VERSION, TaskSpec, canonical_split, task_specs


class GenerationError(RuntimeError):
    """No candidate spec of a task index produced a solvable game."""


def game_from_spec(spec: TaskSpec) -> GameFiles:
    """The unverified game of one spec (raises :class:`SceneError` if the room can't host it)."""
    config = spec.config
    scene = sample_scene(
        floor_plan(spec.floor_plan),
        spec.task_type,
        spec.seed,
        max_receptacles=config.max_receptacles,
        max_distractor_types=config.max_distractor_types,
        max_instances=config.max_instances,
    )
    domain, grammar = game_logic()
    name = f"sdgym_{spec.split}_{spec.index}"
    game = {
        "pddl_domain": domain,
        "pddl_problem": pddl_problem(scene, name),
        "grammar": grammar.replace("UNKNOWN GOAL", scene.goal_template),
        "solvable": False,
    }
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
        "sdgym": {"split": spec.split, "index": spec.index, "generator_version": GENERATOR_VERSION},
    }
    return GameFiles(game, traj)


def solve(game: dict[str, Any]) -> list[str] | None:
    """The planner's walkthrough if replaying it wins the game, else ``None``.

    A game already won at reset (goal true in the initial state) counts as unsolvable."""
    env = start_game(game, walkthrough=True)
    try:
        state = reset_game(env)
        if state["won"]:
            return None
        walkthrough = list(state["extra.walkthrough"] or [])
        for command in walkthrough:
            if command not in state["admissible_commands"]:
                return None
            state, _, _ = env.step(command)
        return walkthrough if state["won"] else None
    finally:
        env.close()


def build_game(split: str, index: int) -> GameFiles:
    """Generate and verify the game of ``(split, index)`` (deterministic)."""
    for spec in task_specs(split, index):
        try:
            files = game_from_spec(spec)
        except SceneError:
            continue
        walkthrough = solve(files.game)
        if walkthrough:
            game = {**files.game, "solvable": True, "walkthrough": walkthrough}
            return GameFiles(game, files.traj)
    raise GenerationError(f"no solvable game for {split!r} task {index}")


def game_folder(split: str, index: int) -> Path:
    """Folder of the game for ``(split, index)``, generated on first use and cached."""
    split = canonical_split(split)
    root = cache_dir("alfworld", f"v{GENERATOR_VERSION}", split)
    folder = root / f"{index:05d}"
    if (folder / GAME_FILE).exists():
        return folder
    with file_lock(root / f".{index:05d}.lock"):
        if not (folder / GAME_FILE).exists():
            files = build_game(split, index)
            with atomic_directory(folder) as staging:
                write_game(staging, files)
    return folder


def load_generated(split: str, index: int) -> GameFiles:
    """The game files of ``(split, index)`` (generating them if needed)."""
    return read_game(game_folder(split, index))
