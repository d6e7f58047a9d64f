"""Success split by a task feature (benchmarks/protocol/success_by_feature.py), on hand-made run
folders whose outcomes depend on the feature, with the first observations read from a stand-in
and, once, from a real env."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.protocol.success_by_feature import (
    NO_MATCH,
    feature_rows,
    first_observations,
    main,
    success_by_feature,
    task_features,
)

ENV = "sdgym/SearchQA-v0"
TASKS = list(range(8))
COLOUR = {t: ("red" if t % 2 else "blue") for t in TASKS}
"""Odd tasks are "red", even ones "blue"."""


def _record(method: str, seed: int, wins: set[int]) -> dict:
    outcomes = [{"task_index": t, "rollout_seed": r, "success": t in wins, "score": 0.0}
                for t in TASKS for r in (0, 1)]
    return {"env_id": ENV, "method": method, "seed": seed, "split": "easy_test",
            "outcomes": outcomes, "preset_fingerprint": "f"}


def _records() -> list[dict]:
    """The start wins the blue tasks only; the trained method wins every task."""
    blue = {t for t in TASKS if COLOUR[t] == "blue"}
    return ([_record("sft-start", s, blue) for s in (0, 1)]
            + [_record("grpo", s, set(TASKS)) for s in (0, 1)])


def _run_folder(tmp_path: Path, records: list[dict]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    keys = []
    for record in records:
        kind = "start" if record["method"] == "sft-start" else "train"
        key = f"{kind}-SearchQA-v0-{record['method']}-seed{record['seed']}"
        (tmp_path / "cells" / key).mkdir(parents=True)
        (tmp_path / "cells" / key / "result.json").write_text(json.dumps(record))
        keys.append(key)
    (tmp_path / "plan.json").write_text(json.dumps({"preset": "p", "preset_fingerprint": "f",
                                                    "cells": keys}))
    return tmp_path


def _observations(env: str, split: str, tasks, env_kwargs) -> dict[int, str]:
    assert (env, split) == (ENV, "easy_test")
    return {t: f"Move it to the {COLOUR[t]} box." for t in tasks}


def test_features_take_the_first_group_or_the_match_or_say_none_matched() -> None:
    observations = {0: "move it to the red box", 1: "nothing here"}
    assert task_features(observations, r"to the (\w+) box") == {0: "red", 1: NO_MATCH}
    assert task_features(observations, r"\w+ box") == {0: "red box", 1: NO_MATCH}


def test_rows_split_success_and_the_paired_difference_by_feature() -> None:
    rows = {(r.method, r.feature): r for r in feature_rows(_records(), COLOUR, "sft-start")}
    assert set(rows) == {(m, c) for m in ("grpo", "sft-start") for c in ("blue", "red")}
    start_blue, start_red = rows[("sft-start", "blue")], rows[("sft-start", "red")]
    assert (start_blue.tasks, start_blue.seeds) == (4, 2)
    assert start_blue.success.point == 1.0 and start_red.success.point == 0.0
    assert start_blue.versus is None  # a method is not compared with itself
    # training changed nothing on blue tasks and everything on red ones
    assert rows[("grpo", "blue")].versus.point == 0.0
    red = rows[("grpo", "red")].versus
    assert red.point == 1.0 and red.excludes_zero() == 1


def test_a_run_folder_gives_one_table_row_per_method_and_feature(tmp_path: Path) -> None:
    run = _run_folder(tmp_path, _records())
    table = success_by_feature(str(run), r"to the (\w+) box", "sft-start",
                               read_observations=_observations)
    lines = table.splitlines()
    assert lines[0].endswith("− sft-start [95% CI] |") and len(lines) == 2 + 4
    red_grpo = next(line for line in lines if "| grpo | red |" in line)
    assert "| 4 | 2 | 1.000" in red_grpo and "+1.000" in red_grpo


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path / "missing"), "--pattern", "x"]) == 2
    assert "is not a folder" in capsys.readouterr().err
    run = _run_folder(tmp_path / "run", _records())
    assert main([str(run), "--pattern", "(unclosed"]) == 2
    assert "not a regular expression" in capsys.readouterr().err
    assert main([str(run), "--pattern", "x", "--env-kwarg", "novalue"]) == 2
    err = capsys.readouterr().err
    assert "--env-kwarg" in err and len(err.strip().splitlines()) == 1
    assert main([str(run), "--pattern", "x", "--versus", "grpoo"]) == 2
    assert "'grpoo'" in capsys.readouterr().err
    empty = _run_folder(tmp_path / "empty", [])
    assert main([str(empty), "--pattern", "x"]) == 2
    assert "no finished cell" in capsys.readouterr().err


def test_first_observations_come_from_the_real_env() -> None:
    pytest.importorskip("gymnasium")
    observations = first_observations(ENV, "test", [0, 1])
    assert set(observations) == {0, 1}
    assert observations[0] != observations[1] and all(observations.values())
