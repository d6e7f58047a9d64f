"""The GPU check's CPU-runnable parts: it skips cleanly without a GPU, and its CPU dry mode
trains the tiny model with the HF backend and reports PASS lines with speed and memory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from baselines import gpu_check  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here: the check would run")
def test_script_skips_cleanly_without_a_gpu() -> None:
    done = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh")], capture_output=True,
                          text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("SKIP gpu-check: no CUDA GPU")


def test_cpu_dry_mode_trains_with_the_hf_backend(capsys) -> None:
    assert gpu_check.main(["--device", "cpu", "--shape", "tiny", "--steps", "2"]) == 0
    out = capsys.readouterr().out
    hf = next(line for line in out.splitlines() if line.startswith("PASS hf-train"))
    assert "tokens/s" in hf and "vs plan" in hf
    assert "FAIL" not in out and out.rstrip().splitlines()[-1].startswith("PASS gpu-check")


def test_a_failing_check_is_reported_not_raised(capsys, tmp_path) -> None:
    import argparse

    args = argparse.Namespace(device="cpu", steps=1)
    assert not gpu_check.run_backend("hf", tmp_path / "no-model", args, tmp_path)
    assert capsys.readouterr().out.startswith("FAIL hf-train: ")
