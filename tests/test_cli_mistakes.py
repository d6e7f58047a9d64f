"""CLI mistakes end in one line on stderr that names what was wrong (exit code 2), never a
traceback; and the short env id works wherever the full one does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sdgym.cli import main

pytest.importorskip("torch")


def _one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    return err


@pytest.mark.parametrize("command", ["train", "sft", "benchmark"])
def test_invalid_toml_names_the_file(tmp_path, capsys, command: str) -> None:
    preset = tmp_path / "broken.toml"
    preset.write_text('steps = 4\nmethod = "grpo\n')
    err = _one_line_error(capsys, [command, "--preset", str(preset)])
    assert str(preset) in err and "invalid TOML" in err


def test_serve_refuses_a_port_out_of_range(capsys) -> None:
    err = _one_line_error(capsys, ["serve", "webshop", "--port", "99999", "--size", "tiny"])
    assert "99999" in err


@pytest.mark.parametrize("command", [["train", "--set"], ["sft", "--set"]])
def test_missing_model_folder_is_named(tmp_path, capsys, command: list[str]) -> None:
    missing = tmp_path / "no-such-model"
    err = _one_line_error(capsys, [*command, f"model.name={str(missing)!r}", "--out", str(tmp_path)])
    assert str(missing) in err


def test_eval_with_missing_model_folder_is_named(tmp_path, capsys) -> None:
    missing = tmp_path / "no-such-model"
    err = _one_line_error(capsys, ["eval", "--env", "SearchQA-v0", "--model", str(missing)])
    assert str(missing) in err


@pytest.mark.parametrize("command", ["baseline", "eval"])
def test_unknown_env_is_one_line(capsys, command: str) -> None:
    err = _one_line_error(capsys, [command, "--env", "Nope-v0", "--out", "unused"])
    assert "Nope-v0" in err


def test_baseline_accepts_the_short_env_id(tmp_path) -> None:
    out = tmp_path / "report"
    argv = ["baseline", "--env", "SearchQA-v0", "--algo", "expert", "--episodes", "2",
            "--seeds", "1", "--env-kwarg", "size=tiny", "--out", str(out)]
    assert main(argv) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [(r["env_id"], r["policy"]) for r in records] == [("sdgym/SearchQA-v0", "expert")]


@pytest.mark.parametrize("command", ["train", "sft", "benchmark"])
@pytest.mark.parametrize("name", ["", "looks-like.toml"])
def test_a_preset_folder_is_named(tmp_path, capsys, command: str, name: str) -> None:
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    err = _one_line_error(capsys, [command, "--preset", str(folder)])
    assert f"preset {str(folder)!r} is a folder" in err


def _unwritable_outs(tmp_path) -> list:
    """Paths no ``--out`` can be made at: under a regular file, and (Linux) under ``/proc``."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    return [blocker / "out"] + ([Path("/proc/nope")] if Path("/proc/self").exists() else [])


@pytest.mark.parametrize("command", [["train"], ["benchmark", "--dry-run"],
                                     ["eval", "--env", "SearchQA-v0"]])
def test_an_unwritable_out_is_named(tmp_path, capsys, command: list[str]) -> None:
    for out in _unwritable_outs(tmp_path):
        target = out / "trajectories.jsonl" if command[0] == "eval" else out
        err = _one_line_error(capsys, [*command, "--out", str(target)])
        assert f"--out {target}" in err
    assert not (tmp_path / "a-file").is_dir()


def test_eval_refuses_a_folder_as_its_out_file(tmp_path, capsys) -> None:
    err = _one_line_error(capsys, ["eval", "--env", "SearchQA-v0", "--out", str(tmp_path)])
    assert f"--out {tmp_path} is a folder" in err


def test_a_device_this_machine_lacks_is_refused_before_set_up(tmp_path, capsys) -> None:
    import torch

    missing = f"cuda:{torch.cuda.device_count()}"  # one past the last GPU, on any machine
    err = _one_line_error(capsys, ["train", "--infra.device", missing, "--out", str(tmp_path)])
    assert repr(missing) in err and "infra.device" in err
    assert list(tmp_path.iterdir()) == []  # no run folder: refused before the Trainer


def test_a_missing_gpu_names_the_gpus_there_are(tmp_path, capsys, monkeypatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    err = _one_line_error(capsys, ["train", "--infra.device", "cuda:7", "--out", str(tmp_path)])
    assert "'cuda:7': this machine has CUDA devices cuda:0..cuda:1" in err


def test_resume_of_a_run_that_does_not_exist_is_refused(tmp_path, capsys) -> None:
    out = tmp_path / "never-trained"
    err = _one_line_error(capsys, ["train", "--resume", "--out", str(out)])
    assert "--resume" in err and str(out / "SearchQA-v0" / "grpo" / "seed0") in err
    assert not out.exists()


def test_serve_refuses_an_unknown_split(capsys) -> None:
    err = _one_line_error(capsys, ["serve", "webshop", "--split", "nope", "--size", "tiny"])
    assert "'nope'" in err and "'test'" in err


@pytest.mark.parametrize(("argv", "named"), [
    (["train", "--set", "lr"], "--set expects KEY=VALUE, got 'lr'"),
    (["eval", "--env", "SearchQA-v0", "--prompt-limit", "garbage"],
     "--prompt-limit expects KEY=VALUE, got 'garbage'"),
    (["eval", "--env", "SearchQA-v0", "--split", "nope"], "unknown split 'nope'; this env has"),
    (["baseline", "--env", "SearchQA-v0", "--split", "nope"], "unknown split 'nope'; this env has"),
    (["eval", "--env", "SearchQA-v0", "--split", "test[::0]"],
     "bad split slice 'test[::0]': the step must be a positive integer"),
    (["baseline", "--env", "SearchQA-v0", "--episodes", "0"], "--episodes must be >= 1, got 0"),
    (["eval", "--env", "SearchQA-v0", "--episodes", "-1"], "--episodes must be >= 1, got -1"),
    (["eval", "--env", "SearchQA-v0", "--seeds", "0"], "--seeds must be >= 1, got 0"),
    (["benchmark", "--dry-run", "--jobs", "0"], "--jobs must be >= 1, got 0"),
])
def test_the_message_names_the_option_given(tmp_path, capsys, argv: list[str],
                                           named: str) -> None:
    err = _one_line_error(capsys, [*argv, "--out", str(tmp_path / "out")])
    assert named in err and "--env-kwarg" not in err and "sub-env" not in err


def test_the_process_exits_2_with_one_line_and_no_traceback(tmp_path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sdgym.cli", "train", "--resume", "--out", str(tmp_path / "none")],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith("error: --resume") and str(tmp_path / "none") in result.stderr
