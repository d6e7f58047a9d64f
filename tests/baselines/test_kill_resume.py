"""``kill -9`` in the middle of ``sdgym train``, then ``--resume``: the same run as without the kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("transformers")

import torch  # noqa: E402

from baselines.checkpoint import load_latest  # noqa: E402
from baselines.run_log import read_metrics  # noqa: E402

STEPS = 6


def train_command(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "sdgym.cli", "train", "--env", "SearchQA-v0", "--preset", "cpu-smoke",
            "--out", str(out), "--no-eval", "--set", f"steps={STEPS}", "--set", "evaluation.val_every=2", *extra]


def run_dir(out: Path) -> Path:
    return out / "SearchQA-v0" / "grpo" / "seed0"


def steps_logged(out: Path) -> list[int]:
    path = run_dir(out) / "metrics.jsonl"
    return [r["step"] for r in read_metrics(run_dir(out))] if path.exists() else []


@pytest.mark.slow
def test_kill_9_mid_run_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    subprocess.run(train_command(straight), env=environment, check=True, capture_output=True,
                   timeout=600)

    process = subprocess.Popen(train_command(killed), env=environment, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while max(steps_logged(killed), default=-1) < 2 and process.poll() is None:
            assert time.monotonic() < deadline, "the run never reached step 2"
            time.sleep(0.05)
        assert process.poll() is None, "the run finished before it could be killed"
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=60) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    interrupted_at = max(steps_logged(killed))
    assert 2 <= interrupted_at < STEPS

    subprocess.run(train_command(killed, "--resume"), env=environment, check=True,
                   capture_output=True, timeout=600)
    a, b = read_metrics(run_dir(straight)), read_metrics(run_dir(killed))
    assert [r["step"] for r in b] == list(range(STEPS + 1))  # no step lost, none logged twice
    for row_a, row_b in zip(a, b):
        for key in ("loss", "grad_norm", "train/success", "train/score", "val/success"):
            assert row_a.get(key) == pytest.approx(row_b.get(key), abs=1e-6), (row_a["step"], key)
    final_a, final_b = load_latest(run_dir(straight)), load_latest(run_dir(killed))
    assert final_a["step"] == final_b["step"] == STEPS
    for name, tensor in final_a["model"].items():
        assert torch.allclose(tensor, final_b["model"][name], atol=1e-6), name
