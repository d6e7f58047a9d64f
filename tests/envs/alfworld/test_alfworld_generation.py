"""Generated ALFWorld games: every task type solvable by its walkthrough, capped planning with
deterministic redraws, deterministic bytes, atomic cache entries."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
import zlib

import pytest

pytest.importorskip("alfworld")
pytest.importorskip("textworld")

from sdgym.envs.alfworld import generator  # noqa: E402
from sdgym.envs.alfworld.capped import PlanLimits  # noqa: E402
from sdgym.envs.alfworld.engine import reset_game, start_game  # noqa: E402
from sdgym.envs.alfworld.game_io import GAME_FILE, TRAJ_FILE  # noqa: E402
from sdgym.envs.alfworld.generator import (  # noqa: E402
    build_game,
    game_folder,
    load_generated,
    scene_from_spec,
)
from sdgym.envs.alfworld.scene import TASK_TYPES, task_view  # noqa: E402
from sdgym.envs.alfworld.splits import (  # noqa: E402
    SPLITS,
    TaskSpec,
    split_config,
    split_floor_plans,
)


def _digest(folder) -> str:
    return hashlib.sha256(
        (folder / GAME_FILE).read_bytes() + (folder / TRAJ_FILE).read_bytes()
    ).hexdigest()


def test_splits_are_disjoint_in_floor_plans_and_large_enough() -> None:
    assert SPLITS["train"].size >= 3000
    assert not set(split_floor_plans("train")) & set(split_floor_plans("val_unseen"))
    assert set(split_floor_plans("val")) == set(split_floor_plans("train"))
    with pytest.raises(ValueError, match="room size"):
        split_config("train", "huge")


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
def test_draw_that_blew_up_the_planner_now_plans_under_a_small_cap() -> None:
    """Generator v1's val_seen task 23: a 48-receptacle kitchen where fast-downward's blind
    search on the whole problem ran > 6 CPU-minutes and 3 GB. The task view keeps a handful of
    receptacles, so planning fits in 256 MiB."""
    spec = TaskSpec(
        "val_seen", 23, 9, "pick_two_obj_and_place", zlib.crc32(b"alfworld/v1/val_seen/23/0"),
        SPLITS["val_seen"],
    )
    scene = scene_from_spec(spec)
    assert len(scene.receptacles) >= 40
    assert len(task_view(scene).receptacles) <= 6
    files = generator.solve(spec, PlanLimits(memory_bytes=256 << 20, timeout_s=120))
    assert files is not None and files.game["solvable"] and len(files.walkthrough) <= 12


@pytest.mark.slow
def test_planning_over_its_cap_redraws_deterministically(tmp_path, monkeypatch) -> None:
    """A forced tiny memory cap on the first planner call makes the generator take the next
    sub-seed; the result is the same game on every run."""
    real = generator.run_capped

    def first_call_starved(function, limits):
        calls.append(limits)
        if len(calls) == 1:
            limits = dataclasses.replace(limits, memory_bytes=1 << 20)
        return real(function, limits)

    monkeypatch.setattr(generator, "run_capped", first_call_starved)
    digests = []
    for run in range(2):
        calls: list[PlanLimits] = []
        monkeypatch.setenv("SDGYM_CACHE", str(tmp_path / f"run{run}"))
        folder = game_folder("easy", 0)
        assert len(calls) == 2
        digests.append(_digest(folder))
    monkeypatch.setattr(generator, "run_capped", real)
    files = build_game("easy", 0)
    assert files.traj["sdgym"]["attempt"] == 0
    assert digests[0] == digests[1] != hashlib.sha256(b"").hexdigest()
    assert b'"attempt": 1' in (folder / TRAJ_FILE).read_bytes()


def test_a_task_with_no_solvable_draw_says_why_every_draw_failed(monkeypatch) -> None:
    """When every candidate fails, the error counts the draws and their reasons, the child's
    exception included."""
    real = generator.run_capped

    def planner_crashes(function, limits):
        return real(lambda: {}["no such entity"], limits)

    monkeypatch.setattr(generator, "run_capped", planner_crashes)
    with pytest.raises(generator.GenerationError) as raised:
        build_game("easy", 0, "small")
    message = str(raised.value)
    draws = len(generator.task_specs("easy", 0, "small"))
    assert f"'easy' task 0 (small rooms) in {draws} draws: " in message
    crashes = re.search(r"(\d+)x planner failed \(KeyError: 'no such entity'\)", message)
    assert crashes is not None, message
    hosted = re.search(r"(\d+)x the room could not host the task", message)
    assert int(crashes.group(1)) + (int(hosted.group(1)) if hosted else 0) == draws, message


def test_a_plan_that_does_not_win_says_why() -> None:
    game = load_generated("easy", 0, "small").game
    walkthrough = list(game["walkthrough"])
    env = start_game(game)
    try:
        assert generator.replay_failure(env, walkthrough) is None
        assert generator.replay_failure(env, []) == "the planner found no plan"
        assert generator.replay_failure(env, walkthrough[:-1]) == (
            "the plan ends without winning the whole game")
        assert generator.replay_failure(env, ["fly to the moon"] + walkthrough) == (
            "a planned command is not admissible on the whole game")
    finally:
        env.close()


@pytest.mark.slow
def test_generation_is_byte_deterministic(tmp_path, monkeypatch) -> None:
    """Same bytes from fresh caches, for a first-draw game and for redrawn ones."""
    redrawn = [(1, 2), (3, 1)]  # small val_unseen tasks whose first draws the rooms can't host
    digests = []
    for run in range(2):
        monkeypatch.setenv("SDGYM_CACHE", str(tmp_path / f"run{run}"))
        folders = [game_folder("val_unseen", 0)]
        folders += [game_folder("val_unseen", i, "small") for i, _ in redrawn]
        digests.append([_digest(folder) for folder in folders])
    attempts = [json.loads((f / TRAJ_FILE).read_text())["sdgym"]["attempt"] for f in folders]
    assert attempts == [0] + [a for _, a in redrawn]
    assert digests[0] == digests[1] and len(set(digests[0])) == 3


def test_failed_write_leaves_no_cache_entry(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path))
    files = generator.GameFiles({"pddl_problem": "p", "grammar": "g"}, {"task_type": "t"})
    monkeypatch.setattr(generator, "build_game", lambda *args: files)

    def torn_write(folder, written):
        (folder / GAME_FILE).write_text("{")
        raise OSError("disk full")

    monkeypatch.setattr(generator, "write_game", torn_write)
    with pytest.raises(OSError, match="disk full"):
        game_folder("easy", 5)
    root = generator.cache_root("easy")
    assert [p.name for p in root.iterdir() if not p.name.endswith(".lock")] == []


@pytest.mark.slow
def test_generate_command_writes_loadable_upstream_folders(tmp_path, capsys) -> None:
    from sdgym.envs.alfworld.env import ALFWorldEnv
    from sdgym.envs.alfworld.generate import main

    assert main(["--split", "test", "--size", "small", "--count", "1", "--out", str(tmp_path)]) == 0
    assert "1 games" in capsys.readouterr().out
    folder = tmp_path / "val_unseen" / "00000"
    assert sorted(p.name for p in folder.iterdir()) == [GAME_FILE, TRAJ_FILE]
    env = ALFWorldEnv(data_path=tmp_path / "val_unseen")
    try:
        _, info = env.reset(options={"split": "train", "task_index": 0})
        for action in info["privileged"]["expert_plan"]:
            _, _, terminated, _, info = env.step(action)
        assert info["won"] and terminated
    finally:
        env.close()


@pytest.mark.slow
def test_generation_is_identical_in_a_process_with_another_hash_seed(tmp_path, monkeypatch) -> None:
    """Set iteration order (``PYTHONHASHSEED``) must not reach the translator's or planner's
    choices: a fresh interpreter writes the same bytes (easy task 2 is a redrawn one)."""
    script = (
        "import hashlib, sys\n"
        "from sdgym.envs.alfworld.generator import game_folder\n"
        "f = game_folder('easy', 2)\n"
        f"sys.stdout.write(hashlib.sha256((f / {GAME_FILE!r}).read_bytes()"
        f" + (f / {TRAJ_FILE!r}).read_bytes()).hexdigest())\n"
    )
    environ = {**os.environ, "SDGYM_CACHE": str(tmp_path / "child"), "PYTHONHASHSEED": "7"}
    child = subprocess.run(
        [sys.executable, "-c", script], env=environ, capture_output=True, text=True, check=True
    )
    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path / "here"))
    folder = game_folder("easy", 2)
    assert json.loads((folder / TRAJ_FILE).read_text())["sdgym"]["attempt"] == 2
    assert child.stdout == _digest(folder)


def test_easy_splits_are_declared_on_the_env_and_draw_from_disjoint_floor_plans() -> None:
    from sdgym.envs.alfworld.env import ALFWorldEnv
    from sdgym.envs.alfworld.splits import (
        EASY_SPLITS,
        SHORT_TASK_TYPES,
        UNSEEN_FLOOR_PLANS,
        split_floor_plans,
        task_specs,
    )

    assert ALFWorldEnv.easy_splits == EASY_SPLITS and set(EASY_SPLITS) <= set(ALFWorldEnv.splits)
    plans = {split: set(split_floor_plans(split)) for split in EASY_SPLITS}
    assert not plans["easy_train"] & plans["easy_val"]
    assert not (plans["easy_train"] | plans["easy_val"]) & plans["easy_test"]
    assert plans["easy_test"] == set(UNSEEN_FLOOR_PLANS) and len(plans["easy_val"]) == 12
    for split in EASY_SPLITS:
        specs = [task_specs(split, i)[0] for i in range(40)]
        assert {s.task_type for s in specs} == set(SHORT_TASK_TYPES)
        assert all(s.floor_plan in plans[split] and s.config.max_receptacles == 6 for s in specs)
    # the older splits keep their draws (their games, cached by seed, do not change)
    assert task_specs("train", 5)[0].task_type == "pick_two_obj_and_place"
