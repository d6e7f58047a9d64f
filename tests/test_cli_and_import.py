"""The ``sdgym`` command and the cost of ``import sdgym``."""

from __future__ import annotations

import os
import subprocess
import sys

import gymnasium as gym
import pytest

from sdgym.cli import main, parse_env_kwargs

HEAVY_MODULES = ("torch", "transformers", "textworld", "alfworld", "scienceworld", "py4j",
                 "bm25s", "selenium", "flask", "jnius")


def test_import_sdgym_is_light() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import sdgym"],
        capture_output=True, text=True, check=True,
    )
    imported = {line.split("|")[-1].strip().split(".")[0] for line in result.stderr.splitlines()}
    assert not imported & set(HEAVY_MODULES), imported & set(HEAVY_MODULES)


def test_registration_ids_and_limits() -> None:
    limits = {"sdgym/ALFWorld-v0": 50, "sdgym/ScienceWorld-v0": 30, "sdgym/SearchQA-v0": 4,
              "sdgym/WebShop-v0": 15}
    for env_id, limit in limits.items():
        assert gym.spec(env_id).max_episode_steps == limit
    env = gym.make("sdgym:sdgym/SearchQA-v0", size="tiny", max_episode_steps=2)
    env.reset(seed=0)
    env.step("<search>a capital</search>")
    assert env.step("<search>a capital</search>")[3] is True
    env.close()


def test_parse_env_kwargs() -> None:
    assert parse_env_kwargs(["size=tiny", "top_k=5", "x=[1, 2]"]) == {
        "size": "tiny", "top_k": 5, "x": [1, 2]}
    with pytest.raises(SystemExit):
        parse_env_kwargs(["novalue"])


def test_list_shows_ids_extras_and_task_counts(capsys, monkeypatch) -> None:
    from sdgym.envs.searchqa.dataset import generated_dataset

    monkeypatch.setenv("COLUMNS", "400")
    assert main(["list", "--env-kwarg", "SearchQA-v0:size=tiny", "--env-kwarg", "webshop:size=tiny"]) == 0
    out = capsys.readouterr().out
    for env_id in ("ALFWorld-v0", "ScienceWorld-v0", "SearchQA-v0", "WebShop-v0"):
        assert env_id in out
    expected = len(generated_dataset(0, "tiny").questions["test"])
    assert f"test {expected}" in out
    assert "unexpected keyword" not in out


def test_play_runs_an_episode_from_stdin() -> None:
    from sdgym.envs.searchqa.dataset import generated_dataset

    question = generated_dataset(0, "tiny").questions["test"][0]
    script = f"<search>{question.hops[0].query}</search>\n:expert\n<answer>{question.answers[0]}</answer>\n"
    result = subprocess.run(
        [sys.executable, "-m", "sdgym.cli", "play", "SearchQA-v0", "--split", "test",
         "--task-index", "0", "--show-privileged", "--env-kwarg", "size=tiny"],
        input=script, capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    assert question.question in result.stdout
    assert "episode over: won" in result.stdout
    assert "Gold answer" in result.stdout


def test_play_exits_cleanly_on_end_of_input_and_bad_split() -> None:
    base = [sys.executable, "-m", "sdgym.cli", "play", "SearchQA-v0", "--env-kwarg", "size=tiny"]
    done = subprocess.run(base, input="", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "end of input" in done.stdout
    bad = subprocess.run(base + ["--split", "nope"], input="", capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "unknown split" in bad.stderr
