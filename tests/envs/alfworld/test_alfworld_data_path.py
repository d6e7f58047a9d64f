"""ALFWorld ``data_path``: the official ``json_2.1.1`` layout, unchecked games, missing folders,
and the memoisation patch confined to the env's own engine calls."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

pytest.importorskip("alfworld")
pytest.importorskip("textworld")

import gymnasium as gym  # noqa: E402

import sdgym  # noqa: E402, F401
from sdgym.envs.alfworld import speedups  # noqa: E402
from sdgym.envs.alfworld.env import ALFWorldEnv  # noqa: E402
from sdgym.envs.alfworld.game_io import GAME_FILE, TRAJ_FILE, read_game  # noqa: E402
from sdgym.envs.alfworld.generator import game_folder  # noqa: E402


def _stub_game(folder: Path, solvable: object = True, task: str = "pick_and_place_simple") -> None:
    """A trial folder as alfworld lays it out (only what the folder scan reads)."""
    folder.mkdir(parents=True)
    (folder / TRAJ_FILE).write_text(json.dumps({"task_type": task, "pddl_params": {}}))
    game = {"pddl_problem": "", "grammar": ""}
    if solvable != "missing":
        game["solvable"] = solvable
    (folder / GAME_FILE).write_text(json.dumps(game))


def _official(root: Path, counts: dict[str, int]) -> Path:
    data = root / "json_2.1.1"
    for split, count in counts.items():
        for i in range(count):
            _stub_game(data / split / f"pick_and_place_simple-Apple-None-Fridge-{i}" / "trial_T0")
    return data


@pytest.mark.parametrize("via_parent", [False, True])
def test_official_layout_maps_splits_as_alfworld_config(tmp_path, via_parent) -> None:
    data = _official(tmp_path, {"train": 3, "valid_seen": 2, "valid_unseen": 1})
    env = ALFWorldEnv(data_path=tmp_path if via_parent else data)
    counts = {s: env.task_count(s) for s in ("train", "val", "val_seen", "test", "val_unseen")}
    assert counts == {"train": 3, "val": 2, "val_seen": 2, "test": 1, "val_unseen": 1}
    assert env.task_count("easy") == 0


def test_flat_folder_and_dict_still_work(tmp_path) -> None:
    for i in range(2):
        _stub_game(tmp_path / "games" / f"g{i}")
    flat = ALFWorldEnv(data_path=tmp_path / "games")
    assert [flat.task_count(s) for s in ("train", "val", "test", "easy")] == [2, 2, 2, 2]
    split = ALFWorldEnv(data_path={"test": tmp_path / "games"})
    assert split.task_count("test") == 2 and split.task_count("train") == 0


def test_unchecked_games_are_planned_once_and_counted_in_one_warning(tmp_path, monkeypatch) -> None:
    """Stub games cannot be solved: the planner says so, the verdicts are cached, and the
    folder's checked games are counted in one warning."""
    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path / "cache"))
    for i, solvable in enumerate([True, True, None, "missing", False]):
        _stub_game(tmp_path / "train" / f"g{i}", solvable)
    with pytest.warns(UserWarning, match=r"checked 2 games with \"solvable\": null by planning "
                                         r"them \(verdicts cached\): 0 solvable, 2 not") as caught:
        env = ALFWorldEnv(data_path=tmp_path)
    assert len(caught) == 1 and str(tmp_path / "train") in str(caught[0].message)
    assert env.task_count("train") == 2
    verdicts = sorted((tmp_path / "cache" / "alfworld" / "verdicts").glob("*.json"))
    assert len(verdicts) == 2 and all(not json.loads(v.read_text())["solvable"] for v in verdicts)


def test_folder_of_only_unsolvable_unchecked_games_says_why(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path / "cache"))
    for i in range(3):
        _stub_game(tmp_path / "valid_seen" / f"g{i}", None)
    with pytest.raises(ValueError, match=r"none of its 3 games with \"solvable\": null could be "
                                         r"solved") as error:
        ALFWorldEnv(data_path=tmp_path)
    assert str(tmp_path / "valid_seen") in str(error.value)


@pytest.mark.slow
def test_an_unchecked_solvable_game_is_played_and_its_verdict_reused(tmp_path, monkeypatch) -> None:
    """A game as ``alfworld-generate`` writes it before solving (``"solvable": null``, no
    walkthrough) is planned once, played, and not planned again by the next env."""
    source = read_game(game_folder("easy", 0))
    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path / "cache"))
    trial = tmp_path / "json_2.1.1" / "valid_unseen" / "pick_and_place_simple-X-None-Y-1" / "trial_T0"
    trial.mkdir(parents=True)
    game = {k: v for k, v in source.game.items() if k != "walkthrough"}
    (trial / GAME_FILE).write_text(json.dumps({**game, "solvable": None}))
    (trial / TRAJ_FILE).write_text(json.dumps(source.traj))
    with pytest.warns(UserWarning, match="1 solvable, 0 not; 1 playable"):
        env = gym.make("sdgym/ALFWorld-v0", data_path=tmp_path)
    try:
        _, info = env.reset(options={"split": "test", "task_index": 0})
        for action in info["privileged"]["expert_plan"]:
            _, _, terminated, _, info = env.step(action)
        assert info["won"] and terminated
    finally:
        env.close()
    from sdgym.envs.alfworld import verdicts

    monkeypatch.setattr(verdicts, "_plan", lambda folder: pytest.fail("planned twice"))
    with pytest.warns(UserWarning, match="1 solvable"):
        assert ALFWorldEnv(data_path=tmp_path).task_count("test") == 1
    assert json.loads(trial.joinpath(GAME_FILE).read_text())["solvable"] is None  # not written


def test_a_dict_of_paths_with_upstream_split_names_works_and_survives_to_json(tmp_path) -> None:
    from gymnasium.envs.registration import EnvSpec

    for i in range(2):
        _stub_game(tmp_path / "games" / f"g{i}")
    env = gym.make("sdgym/ALFWorld-v0", data_path={"valid_seen": tmp_path / "games",
                                                   "valid_unseen": tmp_path / "games"})
    try:
        assert env.unwrapped.task_count("val") == 2 and env.unwrapped.task_count("test") == 2
        spec = EnvSpec.from_json(env.spec.to_json())
        assert spec.kwargs["data_path"] == {"valid_seen": str(tmp_path / "games"),
                                            "valid_unseen": str(tmp_path / "games")}
        again = gym.make(spec)
        assert again.unwrapped.task_count("test") == 2
        again.close()
    finally:
        env.close()


def test_nonexistent_data_path_fails_at_construction_naming_it(tmp_path) -> None:
    missing = tmp_path / "no-such-json_2.1.1"
    with pytest.raises(FileNotFoundError, match=str(missing)):
        gym.make("sdgym/ALFWorld-v0", data_path=str(missing))
    with pytest.raises(FileNotFoundError, match="split 'val_unseen'.*nope"):
        ALFWorldEnv(data_path={"train": tmp_path, "test": tmp_path / "nope"})


@pytest.mark.slow
def test_official_trial_plays_under_test_and_patch_stays_inside_calls(tmp_path) -> None:
    """An official trial (initial_state.pddl + traj_data.json) in valid_unseen is the test split;
    the memoisation is used during the env's calls and is off between them and after close."""
    source = read_game(game_folder("easy", 0))
    trial = (
        tmp_path / "json_2.1.1" / "valid_unseen" / "pick_and_place_simple-X-None-Y-1" / "trial_T0"
    )
    trial.mkdir(parents=True)
    (trial / "initial_state.pddl").write_text(source.game["pddl_problem"])
    traj = {k: v for k, v in source.traj.items() if k in ("task_type", "pddl_params", "scene")}
    (trial / TRAJ_FILE).write_text(json.dumps(traj))
    _stub_game(tmp_path / "json_2.1.1" / "train" / "other" / "trial_T0")
    speedups.set_enabled(False)
    env = gym.make("sdgym/ALFWorld-v0", data_path=str(tmp_path))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            obs, info = env.reset(options={"split": "test", "task_index": 0})
        assert not speedups.enabled()
        params = source.traj["pddl_params"]
        goal = f"put a {params['object_target'].lower()} in {params['parent_target'].lower()}."
        assert f"Your task is to: {goal}" in obs
        hits = speedups._parsed.cache_info().hits
        for action in info["privileged"]["expert_plan"]:
            _, _, terminated, _, info = env.step(action)
            assert not speedups.enabled()
        assert info["won"] and terminated
        assert speedups._parsed.cache_info().hits > hits  # the steps ran memoised
    finally:
        env.close()
    assert not speedups.enabled() and not (trial / GAME_FILE).exists()
