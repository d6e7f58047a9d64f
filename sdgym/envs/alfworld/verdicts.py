"""Whether an unchecked ALFWorld game can be won, decided once by the planner and cached.

``alfworld-generate`` writes ``"solvable": null`` into ``game.tw-pddl`` before its solver runs, and
alfworld's own loader skips such games. sdgym instead checks each one the way it checks its own
generated games: fast-downward plans on the game (in a forked child under a memory cap,
:mod:`.capped`) and the plan is replayed; the game is playable when the replay wins. The verdict
(and the walkthrough found) is cached under ``$SDGYM_CACHE/alfworld/verdicts/<digest>.json``,
keyed by the SHA-256 of the game's two files, so each game is planned once per machine and the
user's data folder is never written to.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from sdgym.cache import atomic_write_text, cache_dir, file_lock
from sdgym.envs.alfworld.game_io import GAME_FILE, TRAJ_FILE, read_game


def game_digest(folder: Path) -> str:
    """SHA-256 of the game's ``game.tw-pddl`` and ``traj_data.json`` bytes."""
    digest = hashlib.sha256()
    for name in (GAME_FILE, TRAJ_FILE):
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()


def is_solvable(folder: str | Path) -> bool:
    """The cached verdict of the game in ``folder``, planning it on first use."""
    folder = Path(folder)
    key = game_digest(folder)
    root = cache_dir("alfworld", "verdicts")
    entry = root / f"{key}.json"
    if not entry.exists():
        with file_lock(root / f".{key}.lock"):
            if not entry.exists():
                walkthrough = _plan(folder)
                atomic_write_text(entry, json.dumps({"solvable": walkthrough is not None,
                                                     "walkthrough": walkthrough}))
    return bool(json.loads(entry.read_text())["solvable"])


def _plan(folder: Path) -> list[str] | None:
    """A winning walkthrough of the game, or None (no plan, planner limits hit, bad game)."""
    from sdgym.envs.alfworld.capped import PlanningLimitExceeded, run_capped
    from sdgym.envs.alfworld.generator import PLAN_LIMITS, plan_and_replay

    try:
        game = read_game(folder).game
        return run_capped(lambda: plan_and_replay(game, game), PLAN_LIMITS)
    except (PlanningLimitExceeded, KeyError, ValueError, json.JSONDecodeError):
        return None
