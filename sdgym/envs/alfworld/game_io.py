"""ALFWorld game folders in the upstream format, and the loader for official ALFWorld data.

A game folder holds ``game.tw-pddl`` (JSON: ``pddl_domain``, ``pddl_problem``, ``grammar`` with the
goal sentence, ``solvable``, ``walkthrough``) and ``traj_data.json`` (``task_type``,
``pddl_params``, ``scene``, ``turk_annotations``...). Official ALFWorld folders
(``json_2.1.1/<split>/<task>/<trial>/``) may instead hold only ``initial_state.pddl`` and
``traj_data.json``; :func:`read_game` builds the game data from them as alfworld's
``AlfredTWEnv`` does (the templated goal description, never a random human annotation).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

GAME_FILE = "game.tw-pddl"
TRAJ_FILE = "traj_data.json"


@dataclass(frozen=True)
class GameFiles:
    """The two JSON documents of one game."""

    game: dict[str, Any]
    traj: dict[str, Any]

    @property
    def walkthrough(self) -> list[str] | None:
        """The stored expert walkthrough, if any."""
        walkthrough = self.game.get("walkthrough")
        return list(walkthrough) if walkthrough else None

    @property
    def task_type(self) -> str:
        """ALFWorld task type, e.g. ``pick_and_place_simple``."""
        return str(self.traj["task_type"])

    def digest(self) -> str:
        """Short content hash of the problem and goal (part of the task id)."""
        text = self.game["pddl_problem"] + "\n" + self.game["grammar"]
        return hashlib.sha256(text.encode()).hexdigest()[:10]


@cache
def game_logic() -> tuple[str, str]:
    """The wheel's ``(alfred.pddl, alfred.twl2)`` texts."""
    from alfworld.info import ALFRED_PDDL_PATH, ALFRED_TWL2_PATH

    return Path(ALFRED_PDDL_PATH).read_text(), Path(ALFRED_TWL2_PATH).read_text()


def goal_description(traj: dict[str, Any]) -> str:
    """The first goal-library template for ``traj``'s task (alfworld draws one at random)."""
    from alfworld.gen import goal_library

    params = traj["pddl_params"]
    key = traj["task_type"] + ("_slice" if params.get("object_sliced") else "")
    template = goal_library.gdict[key]["templates"][0]
    return template.format(
        obj=str(params.get("object_target", "")).lower(),
        recep=str(params.get("parent_target", "")).lower(),
        toggle=str(params.get("toggle_target", "")).lower(),
        mrecep=str(params.get("mrecep_target", "")).lower(),
    )


def dumps(document: dict[str, Any]) -> str:
    """Canonical JSON (sorted keys, 1-space indent, trailing newline): identical bytes per run."""
    return json.dumps(document, sort_keys=True, indent=1, ensure_ascii=True) + "\n"


def write_game(folder: Path, files: GameFiles) -> None:
    """Write ``game.tw-pddl`` and ``traj_data.json`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / GAME_FILE).write_text(dumps(files.game))
    (folder / TRAJ_FILE).write_text(dumps(files.traj))


def read_game(folder: str | Path) -> GameFiles:
    """Read one game folder (sdgym-generated or official ALFWorld)."""
    folder = Path(folder)
    traj = json.loads((folder / TRAJ_FILE).read_text())
    if (folder / GAME_FILE).exists():
        game = json.loads((folder / GAME_FILE).read_text())
    elif (folder / "initial_state.pddl").exists():
        domain, grammar = game_logic()
        game = {
            "pddl_domain": domain,
            "grammar": grammar,
            "pddl_problem": (folder / "initial_state.pddl").read_text(),
            "solvable": True,
        }
    else:
        raise FileNotFoundError(f"{folder} has neither {GAME_FILE} nor initial_state.pddl")
    if "UNKNOWN GOAL" in game["grammar"]:
        game = {**game, "grammar": game["grammar"].replace("UNKNOWN GOAL", goal_description(traj))}
    return GameFiles(game, traj)


@dataclass(frozen=True)
class GameFolders:
    """The playable game folders under one root, and how many were left out as unchecked."""

    folders: list[Path]
    unchecked: list[Path]
    """Games whose ``game.tw-pddl`` says ``"solvable": null`` (or has no ``solvable`` key):
    ``alfworld-generate`` writes them before its solver ran (alfworld skips them; sdgym checks
    them, :mod:`.verdicts`)."""


def find_game_folders(root: str | Path) -> GameFolders:
    """Every folder under ``root`` with a ``traj_data.json`` and a game, sorted; games known
    unsolvable (``"solvable": false``) and ALFRED's movable/sliced trials are skipped, as
    alfworld's ``AlfredTWEnv.collect_game_files`` does; unchecked ones (``null``) are listed apart."""
    folders: list[Path] = []
    unchecked: list[Path] = []
    for traj in sorted(Path(root).rglob(TRAJ_FILE)):
        folder = traj.parent
        if "movable" in str(folder) or "Sliced" in str(folder):
            continue
        game_path = folder / GAME_FILE
        if game_path.exists():
            solvable = json.loads(game_path.read_text()).get("solvable")
            if solvable is None:
                unchecked.append(folder)
            if not solvable:
                continue
        elif not (folder / "initial_state.pddl").exists():
            continue
        folders.append(folder)
    return GameFolders(folders, unchecked)
