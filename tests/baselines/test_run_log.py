"""RunLog: JSON lines, and the optional Weights & Biases sink (checked against a recording fake)."""

from __future__ import annotations

import json
import sys
import types

import pytest

from baselines import run_log
from baselines.run_log import TAG_GROUPS, RunLog, read_metrics, scalar_tags


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
    assert fake_wandb[1:] == [("log", 0, {"val/success": 0.25, "timing/wall_seconds/update": 1.0}),
                              ("log", 1, {"train/loss": 0.5, "train/success": 1}), ("finish",)]
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


class FakeSummaryWriter:
    def __init__(self, log_dir: str) -> None:
        self.log_dir, self.scalars, self.closed = log_dir, [], False

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.scalars.append((tag, value, step))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


TRAINER_STEP = {  # the shape of a trainer step record (baselines/trainer.py, learner.py)
    "loss": 0.5, "policy_loss": 0.4, "kl": 0.01, "entropy": 1.2, "grad_norm": 0.3,
    "clip_fraction": 0.0, "head/beta": 0.5, "teacher/gap_mean": 0.2, "train/success": 0.25,
    "val/success": 0.5, "phase_seconds": {"generation": 1.5, "update": 2.0},
    "phase_cpu_seconds": {"generation": 1.4, "update": 1.9}, "tokens": {"generated": 64},
    "note": "text", "bad": float("inf"),
}


def test_every_scalar_lands_in_one_of_the_tag_groups() -> None:
    tags = scalar_tags(TRAINER_STEP)
    assert {tag.split("/")[0] for tag in tags} == set(TAG_GROUPS) - {"test"}
    assert tags["train/loss"] == 0.5 and tags["train/kl"] == 0.01
    assert tags["head/beta"] == 0.5 and tags["head/teacher/gap_mean"] == 0.2
    assert tags["timing/wall_seconds/generation"] == 1.5
    assert tags["timing/cpu_seconds/update"] == 1.9
    assert tags["cost/tokens/generated"] == 64.0
    assert not any(t.endswith(("note", "bad")) for t in tags)


def test_tensorboard_gets_grouped_tags_and_phase_timings(tmp_path, monkeypatch) -> None:
    writers: list[FakeSummaryWriter] = []
    module = types.ModuleType("torch.utils.tensorboard")
    module.SummaryWriter = lambda log_dir: writers.append(FakeSummaryWriter(log_dir)) or writers[-1]
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", module)
    log = RunLog(tmp_path)
    log.step(3, TRAINER_STEP)
    log.close()
    (writer,) = writers
    assert writer.log_dir == str(tmp_path / "tensorboard") and writer.closed
    assert ("timing/wall_seconds/update", 2.0, 3) in writer.scalars
    assert ("train/kl", 0.01, 3) in writer.scalars
    assert all(tag.split("/")[0] in TAG_GROUPS for tag, _, _ in writer.scalars)


def test_missing_tensorboard_is_a_one_line_notice_once(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # `import` fails
    monkeypatch.setattr(run_log, "_NOTICES", set())
    for name in ("a", "b"):
        RunLog(tmp_path / name).close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install tensorboard" in err
    RunLog(tmp_path / "c", tensorboard=False).close()
    assert capsys.readouterr().err == ""


def _fake_tensorboard(monkeypatch) -> list:
    writers: list[FakeSummaryWriter] = []
    module = types.ModuleType("torch.utils.tensorboard")
    module.SummaryWriter = lambda log_dir: writers.append(FakeSummaryWriter(log_dir)) or writers[-1]
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", module)
    return writers


def test_timing_curves_start_once_non_zero_and_the_test_score_is_logged(tmp_path,
                                                                        monkeypatch) -> None:
    writers = _fake_tensorboard(monkeypatch)
    log = RunLog(tmp_path)
    log.step(1, {"loss": 0.0, "phase_seconds": {"generation": 1.0, "teacher_forward": 0.0}})
    log.step(2, {"loss": 0.1, "phase_seconds": {"generation": 1.0, "teacher_forward": 0.5}})
    log.step(3, {"loss": 0.2, "phase_seconds": {"generation": 1.0, "teacher_forward": 0.0}})
    log.final(3, {"test/success": 0.25, "test/score": 0.5}, split="test")
    log.close()
    (writer,) = writers
    teacher = [(value, step) for tag, value, step in writer.scalars
               if tag == "timing/wall_seconds/teacher_forward"]
    assert teacher == [(0.5, 2), (0.0, 3)]  # no flat zero before it ever ran, zeros after
    assert ("train/loss", 0.0, 1) in writer.scalars  # only timing/cost curves wait
    assert ("test/success", 0.25, 3) in writer.scalars and ("test/score", 0.5, 3) in writer.scalars
    assert [r["step"] for r in read_metrics(tmp_path)] == [1, 2, 3]  # the test: an event record
    last = json.loads((tmp_path / "metrics.jsonl").read_text().splitlines()[-1])
    assert last["event"] == "test" and last["test/success"] == 0.25 and last["after_step"] == 3


def test_tensorboard_off_writes_no_event_files(tmp_path, monkeypatch) -> None:
    writers = _fake_tensorboard(monkeypatch)
    RunLog(tmp_path, tensorboard=False).close()
    assert writers == []


def test_progress_in_a_log_is_one_whole_line_per_step(tmp_path, monkeypatch, capsys) -> None:
    from baselines.run_log import progress_line

    assert progress_line(2, 8, 60.0, {"train/success": 0.25, "loss": 0.5, "note": "x"}) == (
        "step 2/8  elapsed 1m00s  ETA 3m00s  train/success 0.250  loss 0.500")
    assert progress_line(8, 8, 600.0, {}) == "step 8/8  elapsed 10m00s  done"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    log = RunLog(tmp_path, progress=True, total=2, tensorboard=False)
    log.step(0, {"val/success": 0.5})
    log.step(1, {"loss": 1.0})
    log.close()
    err = capsys.readouterr().err
    assert "\r" not in err and err.count("step 1/2") == 1 and "step 0/" not in err
