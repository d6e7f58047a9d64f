"""``sdgym eval`` and ``sdgym rollout`` on the tiny model."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

from sdgym.cli import main  # noqa: E402


@pytest.mark.parametrize("command", ["eval", "rollout"])
def test_eval_and_rollout_write_public_trajectories(tmp_path, command, capsys) -> None:
    from transformers.utils import logging as transformers_logging

    transformers_logging.enable_progress_bar()  # the CLI turns transformers' loading bars off
    out = tmp_path / "traj.jsonl"
    code = main([command, "--env", "SearchQA-v0", "--env-kwarg", "size=tiny", "--episodes", "2",
                 "--seeds", "2", "--max-new-tokens", "12", "--out", str(out)])
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and {r["rollout_seed"] for r in rows} == {0, 1}
    assert all("Gold answer" not in r["prompt"] for r in rows)
    captured = capsys.readouterr()
    assert "success" in captured.out
    assert "Loading weights" not in captured.err + captured.out
    assert not transformers_logging.is_progress_bar_enabled()


def test_eval_prompt_limits_apply_and_unknown_keys_fail(tmp_path, capsys) -> None:
    out = tmp_path / "traj.jsonl"
    args = ["eval", "--env", "SearchQA-v0", "--env-kwarg", "size=tiny", "--episodes", "2", "--seeds", "1",
            "--max-new-tokens", "8", "--out", str(out)]
    assert main([*args, "--prompt-limit", "history=0", "--prompt-limit", "observation_chars=40"]) == 0
    prompts = [json.loads(line)["prompt"] for line in out.read_text().splitlines()]
    assert prompts and all("Recent history" not in p for p in prompts)
    assert main([*args, "--prompt-limit", "colour=1"]) == 2
    assert "unknown prompt limits ['colour']" in capsys.readouterr().err


def test_eval_panel_width_bounds_envs_at_once_not_outcomes(tmp_path, capsys) -> None:
    """``--panel-width`` runs that many episodes at once (ScienceWorld's JVM holds about 16
    envs); each episode's turns are the same at any width."""
    args = ["eval", "--env", "SearchQA-v0", "--env-kwarg", "size=tiny", "--episodes", "3",
            "--seeds", "2", "--max-new-tokens", "8"]
    turns = {}
    for width in (1, 3):
        out = tmp_path / f"w{width}.jsonl"
        assert main([*args, "--panel-width", str(width), "--out", str(out)]) == 0
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        turns[width] = sorted((r["task_id"], r["rollout_seed"], r["turn"], r["response"], r["won"])
                              for r in rows)
    assert turns[1] == turns[3] and len({t[:2] for t in turns[1]}) == 6
    assert main([*args, "--panel-width", "0"]) == 2
    assert "--panel-width must be >= 1, got 0" in capsys.readouterr().err
