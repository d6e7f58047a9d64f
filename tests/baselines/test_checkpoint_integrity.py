"""Checkpoints carry digests: a damaged one is skipped for the last intact one with a warning
naming it; with none intact, one error names the files; killed writes leave no staging folder;
a used run folder is not silently reused."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest
import torch

from baselines.checkpoint import CheckpointError, checkpoint_folders, load_latest, save_checkpoint
from baselines.config import load_preset
from baselines.trainer import Trainer, check_fresh_run_dir


def two_checkpoints(run_dir):
    save_checkpoint(run_dir, 1, {"step": 1, "w": torch.arange(4096.0)})
    save_checkpoint(run_dir, 2, {"step": 2, "w": torch.arange(4096.0) * 2})
    return run_dir / "checkpoints" / "step-000002" / "state.pt"


def flip_byte_inside_tensor_data(path) -> None:
    data = bytearray(path.read_bytes())
    position = data.find(b"\x00\x00\xfa\x45")
    assert position > 0  # the float32 8000.0 of the stored tensor
    data[position + 3] ^= 0x01
    path.write_bytes(bytes(data))


def test_bit_flip_inside_the_tensor_data_falls_back_with_a_warning(tmp_path, caplog) -> None:
    state_file = two_checkpoints(tmp_path)
    flip_byte_inside_tensor_data(state_file)
    assert torch.load(state_file, weights_only=False)["step"] == 2  # the zip still loads
    with caplog.at_level(logging.WARNING, "sdgym.checkpoint"):
        state = load_latest(tmp_path)
    assert state["step"] == 1 and torch.equal(state["w"], torch.arange(4096.0))
    warnings = [r.getMessage() for r in caplog.records]
    assert any("step-000002" in m and "sha256" in m for m in warnings), warnings
    assert all("\n" not in m for m in warnings)


@pytest.mark.parametrize("damage", ["truncate", "empty", "delete", "delete-folder"])
def test_no_intact_checkpoint_is_one_error_naming_the_file(tmp_path, damage) -> None:
    save_checkpoint(tmp_path, 1, {"step": 1}, keep=1)
    folder = tmp_path / "checkpoints" / "step-000001"
    state_file = folder / "state.pt"
    if damage == "truncate":
        state_file.write_bytes(state_file.read_bytes()[:50])
    elif damage == "empty":
        state_file.write_bytes(b"")
    elif damage == "delete":
        state_file.unlink()
    else:
        import shutil

        shutil.rmtree(folder)
    with pytest.raises(CheckpointError) as error:
        load_latest(tmp_path)
    message = str(error.value)
    assert "\n" not in message and "step-000001" in message
    if damage != "delete-folder":
        assert "state.pt" in message


def test_truncated_latest_falls_back_to_the_previous(tmp_path, caplog) -> None:
    state_file = two_checkpoints(tmp_path)
    state_file.write_bytes(state_file.read_bytes()[:1000])
    (tmp_path / "checkpoints" / "latest.json").write_text("{")  # a torn pointer too
    with caplog.at_level(logging.WARNING, "sdgym.checkpoint"):
        assert load_latest(tmp_path)["step"] == 1
    assert any("step-000002" in r.getMessage() for r in caplog.records)


def test_rotation_keeps_the_named_checkpoint_and_drops_a_replaced_future(tmp_path) -> None:
    for step in (1, 2, 3, 4):
        save_checkpoint(tmp_path, step, {"step": step})
    assert [s for s, _ in checkpoint_folders(tmp_path)] == [3, 4]
    save_checkpoint(tmp_path, 2, {"step": 2, "again": True})  # a resume from an older one
    assert [s for s, _ in checkpoint_folders(tmp_path)] == [2]
    assert load_latest(tmp_path)["again"] is True


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_staging_of_a_killed_write_is_removed(tmp_path) -> None:
    save_checkpoint(tmp_path, 1, {"step": 1})
    checkpoints = tmp_path / "checkpoints"
    import socket

    killed = checkpoints / f".step-000002.tmp-{dead_pid()}@{socket.gethostname()}-abc123"
    legacy = checkpoints / ".step-000003.x1y2z3"  # staging name of earlier sdgym versions
    for folder in (killed, legacy):
        folder.mkdir()
        (folder / "state.pt").write_bytes(b"partial")
    assert load_latest(tmp_path)["step"] == 1
    assert not killed.exists() and not legacy.exists()
    assert sorted(p.name for p in checkpoints.iterdir()) == ["latest.json", "step-000001"]


def test_a_used_run_folder_is_refused_without_resume(tmp_path) -> None:
    run_dir = tmp_path / "run"
    check_fresh_run_dir(run_dir)  # a new folder is fine
    run_dir.mkdir()
    (run_dir / "metrics.jsonl").write_text(json.dumps({"step": 0}) + "\n")
    config = load_preset("cpu-smoke", out_dir=str(tmp_path / "runs"))
    used = config.run_dir()
    used.mkdir(parents=True)
    (used / "metrics.jsonl").write_text(json.dumps({"step": 0}) + "\n")
    with pytest.raises(ValueError, match="--resume.*another --out") as error:
        Trainer(config)
    assert str(used) in str(error.value) and "\n" not in str(error.value)
    assert (used / "metrics.jsonl").read_text().count("\n") == 1  # nothing appended


def test_torn_sft_warm_start_is_rebuilt_with_a_warning(tmp_path, caplog) -> None:
    pytest.importorskip("transformers")
    from baselines.warm_start import warm_start

    config = load_preset("cpu-smoke", {"sft.steps": 2, "sft.tasks": 4}, out_dir=str(tmp_path), seed=11)
    folder = warm_start(config)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    with caplog.at_level(logging.WARNING, "sdgym.cache"):
        assert warm_start(config) == folder
    assert any(str(folder) in r.getMessage() for r in caplog.records)
    from agents.model_loading import load_model

    load_model(folder)  # loads again
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]
