"""``sdgym benchmark --dry-run``: cost projected from finished cells and measured step times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.protocol.matrix import load_benchmark_preset, plan, preset_fingerprint
from benchmarks.protocol.projection import measured_step_seconds, project
from sdgym.cli import main


def _log_steps(run_root: Path, phase_seconds: list[dict[str, float]]) -> None:
    run = run_root / "SearchQA-v0" / "grpo" / "seed0"
    run.mkdir(parents=True)
    rows = [{"step": step, "phase_seconds": phases} for step, phases in enumerate(phase_seconds)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_projection_uses_finished_cells_then_measured_steps_then_the_guess(tmp_path: Path) -> None:
    preset = load_benchmark_preset("cpu-smoke")
    cells, _ = plan(preset)
    train = [c for c in cells if c.kind == "train" and c.env_id == "sdgym/SearchQA-v0"]
    baselines = [c for c in cells if c.kind == "baseline"]
    assert len(train) >= 2 and len(baselines) >= 2
    measured, sibling = train[0], train[1]
    _log_steps(tmp_path / "runs" / measured.key, [
        {"validation": 5.0},                                     # step 0: not a training step
        {"generation": 1.0, "update": 2.0, "validation": 0.0},
        {"generation": 2.0, "update": 1.0, "validation": 1.0},
    ])
    assert measured_step_seconds(tmp_path / "runs" / measured.key) == [3.0, 4.0]
    finished = tmp_path / "cells" / baselines[0].key / "result.json"
    finished.parent.mkdir(parents=True)
    finished.write_text(json.dumps({"wall_seconds": 12.5,
                                    "preset_fingerprint": preset_fingerprint(preset)}))
    stale = tmp_path / "cells" / baselines[1].key / "result.json"  # made under other settings
    stale.parent.mkdir(parents=True)
    stale.write_text(json.dumps({"wall_seconds": 99.0, "preset_fingerprint": "0" * 16}))

    projection = project(cells, tmp_path, preset)
    steps = 2  # cpu-smoke's training steps
    assert projection[measured.key] == (pytest.approx(3.5 * steps), "own steps")
    assert projection[sibling.key] == (pytest.approx(3.5 * steps), "env steps")
    assert projection[baselines[0].key] == (12.5, "finished")
    assert projection[baselines[1].key] == (preset.seconds_per_cell, "preset guess")  # re-run
    assert set(projection) == {c.key for c in cells}


def test_dry_run_prints_the_matrix_and_runs_nothing(tmp_path: Path, capsys) -> None:
    out = tmp_path / "paper"
    assert main(["benchmark", "--preset", "paper-qwen3.5-2b", "--dry-run", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    preset = load_benchmark_preset("paper-qwen3.5-2b")
    cells, _ = plan(preset)
    total = len(cells) * preset.seconds_per_cell / 60
    assert f"projected total: {total:.1f} min (basis: preset guess)" in printed
    assert not (out / "cells").exists()
