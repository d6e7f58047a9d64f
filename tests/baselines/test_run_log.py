"""RunLog: JSON lines, and the optional Weights & Biases sink (checked against a recording fake)."""

from __future__ import annotations

import sys
import types

import pytest

from baselines.run_log import RunLog, read_metrics


class FakeWandbRun:
    def __init__(self, calls: list) -> None:
        self.calls = calls

    def log(self, data: dict, step: int) -> None:
        self.calls.append(("log", step, data))

    def finish(self) -> None:
        self.calls.append(("finish",))


@pytest.fixture
def fake_wandb(monkeypatch: pytest.MonkeyPatch) -> list:
    calls: list = []
    module = types.ModuleType("wandb")
    module.init = lambda **kwargs: calls.append(("init", kwargs)) or FakeWandbRun(calls)
    monkeypatch.setitem(sys.modules, "wandb", module)
    return calls


def test_wandb_gets_finite_scalars_per_step_and_is_finished(tmp_path, fake_wandb: list) -> None:
    log = RunLog(tmp_path, wandb={"project": "sdgym-test", "name": "searchqa/grpo/seed0"})
    log.step(0, {"val/success": 0.25, "phase_seconds": {"update": 1.0}})
    log.step(1, {"loss": 0.5, "grad_norm": float("nan"), "train/success": 1})
    log.close()
    kind, settings = fake_wandb[0]
    assert kind == "init" and settings["project"] == "sdgym-test"
    assert settings["mode"] == "offline" and settings["dir"] == str(tmp_path)  # offline unless asked
    assert fake_wandb[1:] == [("log", 0, {"val/success": 0.25}),
                              ("log", 1, {"loss": 0.5, "train/success": 1}), ("finish",)]
    assert [r["step"] for r in read_metrics(tmp_path)] == [0, 1]  # JSONL is still written


def test_wandb_requested_but_missing_is_a_clear_error(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wandb", None)  # makes `import wandb` fail
    with pytest.raises(ImportError, match="pip install wandb"):
        RunLog(tmp_path, wandb={"project": "x"})


def test_without_wandb_settings_nothing_is_imported(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wandb", None)
    log = RunLog(tmp_path)
    log.step(0, {"loss": 1.0})
    log.close()
    assert read_metrics(tmp_path)[0]["loss"] == 1.0
