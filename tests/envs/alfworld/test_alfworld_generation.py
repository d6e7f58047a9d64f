"""Generated ALFWorld games: every task type solvable by its walkthrough, deterministic bytes."""

from __future__ import annotations

import hashlib

import pytest

pytest.importorskip("alfworld")
pytest.importorskip("textworld")

from sdgym.envs.alfworld.engine import reset_game, start_game  # noqa: E402
from sdgym.envs.alfworld.game_io import GAME_FILE, TRAJ_FILE  # noqa: E402
from sdgym.envs.alfworld.generator import build_game, game_folder  # noqa: E402
from sdgym.envs.alfworld.scene import TASK_TYPES  # noqa: E402
from sdgym.envs.alfworld.splits import SPLITS, split_floor_plans  # noqa: E402


def _digest(folder) -> str:
    return hashlib.sha256(
        (folder / GAME_FILE).read_bytes() + (folder / TRAJ_FILE).read_bytes()
    ).hexdigest()


def test_splits_are_disjoint_in_floor_plans_and_large_enough() -> None:
    assert SPLITS["train"].size >= 3000
    assert not set(split_floor_plans("train")) & set(split_floor_plans("val_unseen"))
    assert set(split_floor_plans("val")) == set(split_floor_plans("train"))


@pytest.mark.slow
@pytest.mark.parametrize("index", range(6), ids=TASK_TYPES)
def test_walkthrough_solves_every_task_type(index: int) -> None:
    folder = game_folder("easy", index)
    files = build_game("easy", index)
    assert files.task_type == TASK_TYPES[index]
    assert files.game["solvable"] is True and files.walkthrough
    env = start_game(str(folder / GAME_FILE))
    try:
        state = reset_game(env)
        assert not state["won"]
        for command in files.walkthrough:
            assert command in state["admissible_commands"]
            state, _, _ = env.step(command)
        assert state["won"]
    finally:
        env.close()


@pytest.mark.slow
def test_generation_is_byte_deterministic(tmp_path, monkeypatch) -> None:
    digests = []
    for run in range(2):
        monkeypatch.setenv("SDGYM_CACHE", str(tmp_path / f"run{run}"))
        digests.append([_digest(game_folder("val_unseen", i)) for i in (0, 1)])
    assert digests[0] == digests[1]
