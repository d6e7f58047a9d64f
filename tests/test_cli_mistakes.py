"""CLI mistakes end in one line on stderr that names what was wrong (exit code 2), never a
traceback; and the short env id works wherever the full one does."""

from __future__ import annotations

import json

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


def test_unknown_env_is_one_line(capsys) -> None:
    err = _one_line_error(capsys, ["baseline", "--env", "Nope-v0", "--out", "unused"])
    assert "Nope-v0" in err


def test_baseline_accepts_the_short_env_id(tmp_path) -> None:
    out = tmp_path / "report"
    argv = ["baseline", "--env", "SearchQA-v0", "--algo", "expert", "--episodes", "2",
            "--seeds", "1", "--env-kwarg", "size=tiny", "--out", str(out)]
    assert main(argv) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [(r["env_id"], r["policy"]) for r in records] == [("sdgym/SearchQA-v0", "expert")]
