"""Merging benchmark run folders (``sdgym report``), the all-settings table and figure data,
all from hand-made records."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks.protocol.figures import cost_delta_points, method_styles, stability_points
from benchmarks.protocol.merge import PLAN_FILE, merge_runs, missing_cells
from benchmarks.protocol.report import comparisons, settings_table_lines, summarise
from sdgym.cli import main

METHODS = ("grpo", "sdar", "opsd")


def _record(env_id: str, method: str, seed: int, *, kind: str = "train", steps: int = 8,
            model: str = "warm", tasks: int = 30, split: str = "easy_test") -> dict:
    rate = {"grpo": 0.4, "sdar": 0.8, "opsd": 0.1, "sft-start": 0.3}[method]
    outcomes = [{"task_index": t, "task_id": f"t{t}", "rollout_seed": r,
                 "success": (t * 7 + r * 3 + seed) % 10 < rate * 10, "score": 0.0}
                for t in range(tasks) for r in range(2)]
    per_seed = [sum(o["success"] for o in outcomes if o["rollout_seed"] == r) / tasks
                for r in (0, 1)]
    curve = [[0, 0.3], [4, 0.6 if method != "opsd" else 0.1], [8, 0.5]] if kind == "train" else []
    name = env_id.split("/")[-1]
    cell = (f"start-{name}-sft-start-seed{seed}" if kind == "start"
            else f"train-{name}-{method}-seed{seed}")
    return {"kind": kind, "env_id": env_id, "method": method, "seed": seed, "cell": cell,
            "outcomes": outcomes, "success_per_seed": per_seed, "split": split, "seeds": [0, 1],
            "steps": steps if kind == "train" else 0, "model_name": model, "val_split": "easy_val",
            "validation": curve, "auc": 0.5 if curve else None,
            "train_flops_estimate": {"grpo": 2e9, "sdar": 3e9, "opsd": 1e9}.get(method),
            "train_seconds": 10.0, "train_cpu_seconds": 9.0}


def _run_folder(root: Path, name: str, env_id: str, methods=METHODS, seeds=(0, 1), planned=(),
                failed=(), **protocol) -> Path:
    folder = root / name
    records = [_record(env_id, "sft-start", s, kind="start", **protocol) for s in seeds]
    records += [_record(env_id, m, s, **protocol) for m in methods for s in seeds]
    for record in records:
        (folder / "cells" / record["cell"]).mkdir(parents=True)
        (folder / "cells" / record["cell"] / "result.json").write_text(json.dumps(record))
    for key in failed:
        (folder / "cells" / key).mkdir(parents=True)
        (folder / "cells" / key / "failure.json").write_text(
            json.dumps({"cell": key, "errors": ["Traceback ...\nRuntimeError: boom\n"]}))
    (folder / PLAN_FILE).write_text(json.dumps(
        {"cells": [r["cell"] for r in records] + list(failed) + list(planned)}))
    return folder


def test_agreeing_folders_merge_into_one_report_over_both_settings(tmp_path) -> None:
    a = _run_folder(tmp_path, "alf", "sdgym/ALFWorld-v0")
    b = _run_folder(tmp_path, "sw", "sdgym/ScienceWorld-v0")
    result = merge_runs([a, b])
    assert len(result["records"]) == 2 * (2 + 2 * len(METHODS))
    assert result["missing"] == [] and result["failures"] == []
    out = tmp_path / "merged"
    assert main(["report", str(a), str(b), "--out", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert "2 setting(s)" in report and "## All settings" in report
    assert "## sdgym/ALFWorld-v0" in report and "## sdgym/ScienceWorld-v0" in report
    assert "`easy_test` (30 tasks × 2 rollout seeds)" in report and "`easy_val`" in report
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == len(result["records"])
    assert (out / "cost-vs-delta.png").stat().st_size > 0 and (out / "stability.png").exists()


@pytest.mark.parametrize(("change", "field"), [
    ({"steps": 16}, "budget (steps)"), ({"model": "other-warm-start"}, "warm start"),
    ({"tasks": 20}, "test panel"), ({"split": "test"}, "test split"),
    ({"seeds": (0, 1, 2)}, "training seeds")])
def test_folders_that_ran_one_env_under_different_protocols_are_refused(tmp_path, capsys, change,
                                                                         field) -> None:
    a = _run_folder(tmp_path, "one", "sdgym/ALFWorld-v0")
    b = _run_folder(tmp_path, "two", "sdgym/ALFWorld-v0", methods=("sdar",), **change)
    with pytest.raises(ValueError, match=re.escape(f"ALFWorld-v0: {field} differs")):
        merge_runs([a, b])
    assert main(["report", str(a), str(b), "--out", str(tmp_path / "m")]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and field in error[0] and str(a) in error[0]


def test_missing_cells_are_named_planned_failed_and_absent(tmp_path) -> None:
    a = _run_folder(tmp_path, "alf", "sdgym/ALFWorld-v0", failed=["train-ALFWorld-v0-opsd-seed2"],
                    planned=["train-ALFWorld-v0-sdar-seed2"])
    b = _run_folder(tmp_path, "sw", "sdgym/ScienceWorld-v0", methods=("grpo", "sdar"))
    result = merge_runs([a, b])
    assert result["failures"] == [{"cell": "train-ALFWorld-v0-opsd-seed2", "error": "RuntimeError: boom"}]
    notes = "\n".join(result["notes"])
    assert "train-ALFWorld-v0-sdar-seed2: planned in" in notes
    # opsd ran on ALFWorld, never on ScienceWorld: both its cells there are missing
    assert "train-ScienceWorld-v0-opsd-seed0: no folder has it" in notes
    assert set(result["missing"]) == {"train-ALFWorld-v0-opsd-seed2", "train-ALFWorld-v0-sdar-seed2",
                                      "train-ScienceWorld-v0-opsd-seed0",
                                      "train-ScienceWorld-v0-opsd-seed1"}
    assert main(["report", str(a), str(b), "--out", str(tmp_path / "m")]) == 1
    assert "train-ScienceWorld-v0-opsd-seed1" in (tmp_path / "m" / "report.md").read_text()


def test_a_cell_in_two_folders_is_taken_once(tmp_path) -> None:
    a = _run_folder(tmp_path, "one", "sdgym/ALFWorld-v0")
    b = _run_folder(tmp_path, "two", "sdgym/ALFWorld-v0", methods=("grpo",))
    result = merge_runs([a, b])
    assert len(result["records"]) == 2 + 2 * len(METHODS)
    assert any("train-ALFWorld-v0-grpo-seed0: in several folders" in n for n in result["notes"])


def test_a_folder_that_is_not_a_run_is_a_one_line_error(tmp_path, capsys) -> None:
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "m")]) == 2
    assert "not a benchmark run folder" in capsys.readouterr().err


def test_missing_cells_from_records_alone() -> None:
    records = [_record("sdgym/SearchQA-v0", m, 0) for m in ("grpo", "sdar")]
    records += [_record("sdgym/WebShop-v0", "grpo", 0)]
    assert missing_cells(records) == ["start-SearchQA-v0-sft-start-seed0",
                                      "start-WebShop-v0-sft-start-seed0",
                                      "train-WebShop-v0-sdar-seed0"]


def _table(envs=("sdgym/ALFWorld-v0", "sdgym/ScienceWorld-v0")):
    records = [_record(env, m, s) for env in envs for m in METHODS for s in (0, 1)]
    records += [_record(env, "sft-start", s, kind="start") for env in envs for s in (0, 1)]
    table = summarise(records, "flops")
    return table, comparisons(table)


def test_settings_table_marks_the_best_and_the_worse_than_grpo() -> None:
    table, compared = _table()
    lines = settings_table_lines(table, compared)
    assert lines[2] == "| method | ALFWorld-v0 | ScienceWorld-v0 |"
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines if line.startswith("| ")}
    assert list(rows)[:3] == ["method", "sft-start", "grpo"]
    assert rows["sdar"].count("**") == 4 and "↑" in rows["sdar"]  # best in both settings, beats
    assert rows["opsd"].count("↓") == 2 and "**" not in rows["opsd"]
    assert "Δ" not in rows["grpo"]


def test_cost_delta_and_stability_data_come_from_the_records() -> None:
    table, compared = _table()
    points = cost_delta_points(table, compared)
    assert set(points) == {"sdgym/ALFWorld-v0", "sdgym/ScienceWorld-v0"}
    sdar = next(p for p in points["sdgym/ALFWorld-v0"] if p[0] == "sdar")
    assert sdar[1] == pytest.approx(1.5) and sdar[3] > 0  # 3e9 / 2e9 FLOPs; interval above 0
    opsd = next(p for p in points["sdgym/ALFWorld-v0"] if p[0] == "opsd")
    assert opsd[1] == pytest.approx(0.5) and opsd[4] < 0
    drops = {m: drop for m, drop, _ in stability_points(table)["sdgym/ALFWorld-v0"]}
    assert drops == {"grpo": pytest.approx(0.1), "sdar": pytest.approx(0.1), "opsd": pytest.approx(0.2)}


def test_twelve_methods_get_twelve_colours_and_grpo_is_black() -> None:
    methods = ["grpo", "opsd", "opsd_sdar", "grpo_opsd", "sdar", "skill_sd", "rlsd", "agentopsd",
               "pcsd", "opid", "sdpo", "sdft"]
    styles = method_styles(methods)
    assert styles["grpo"]["color"] == "black"
    assert len({s["color"] for s in styles.values()}) == 12
    assert len({tuple(s.values()) for s in method_styles([f"m{i}" for i in range(48)]).values()}) == 48
