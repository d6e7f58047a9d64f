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
            model: str = "warm", tasks: int = 30, split: str = "easy_test",
            size: str | None = None) -> dict:
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
    sized = {} if size is None else {"model_size": size}  # None: a record made before the axis
    return {"kind": kind, "env_id": env_id, "method": method, "seed": seed, "cell": cell,
            "outcomes": outcomes, "success_per_seed": per_seed, "split": split, "seeds": [0, 1],
            "steps": steps if kind == "train" else 0, "model_name": model, "val_split": "easy_val",
            "validation": curve, "auc": 0.5 if curve else None,
            "train_flops_estimate": {"grpo": 2e9, "sdar": 3e9, "opsd": 1e9}.get(method),
            "train_seconds": 10.0, "train_cpu_seconds": 9.0, **sized}


def _run_folder(root: Path, name: str, env_id: str, methods=METHODS, seeds=(0, 1), planned=(),
                failed=(), baselines=(), plan_sizes=None, **protocol) -> Path:
    folder = root / name
    records = [_record(env_id, "sft-start", s, kind="start", **protocol) for s in seeds]
    records += [_record(env_id, m, s, **protocol) for m in methods for s in seeds]
    for algo in baselines:  # a reference baseline: no model, no model size
        baseline = {**_record(env_id, "grpo", 0, kind="baseline"), "method": algo,
                    "cell": f"baseline-{env_id.split('/')[-1]}-{algo}-seed0"}
        del baseline["model_name"]
        records.append(baseline)
    for record in records:
        (folder / "cells" / record["cell"]).mkdir(parents=True)
        (folder / "cells" / record["cell"] / "result.json").write_text(json.dumps(record))
    for key in failed:
        (folder / "cells" / key).mkdir(parents=True)
        (folder / "cells" / key / "failure.json").write_text(
            json.dumps({"cell": key, "errors": ["Traceback ...\nRuntimeError: boom\n"]}))
    plan = {"cells": [r["cell"] for r in records] + list(failed) + list(planned)}
    if plan_sizes is not None:
        plan["model_sizes"] = plan_sizes
    (folder / PLAN_FILE).write_text(json.dumps(plan))
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


def test_a_setting_is_an_env_at_a_model_size(tmp_path) -> None:
    """#41: folders of one env at three model sizes merge into three settings (each its own
    warm start and budget; no cell is taken for another size's), the env at one size keeps its
    bare name, and the all-settings table has a size column, one block of rows per size."""
    tiny = _run_folder(tmp_path, "tiny", "sdgym/ALFWorld-v0", baselines=("random",))  # archived
    small = _run_folder(tmp_path, "s", "sdgym/ALFWorld-v0", methods=("grpo", "sdar"),
                        model="warm-tiny-s", size="tiny-s", steps=4)
    large = _run_folder(tmp_path, "l", "sdgym/ALFWorld-v0", model="warm-tiny-l", size="tiny-l")
    other = _run_folder(tmp_path, "sw", "sdgym/ScienceWorld-v0", size="tiny")
    result = merge_runs([tiny, small, large, other])
    assert len(result["records"]) == 1 + 2 * (1 + 3) + 2 * (1 + 2) + 2 * (1 + 3) * 2
    assert not any("several folders" in note for note in result["notes"])
    assert sorted(result["missing"]) == ["train-ALFWorld-v0-opsd-seed0@tiny-s",
                                         "train-ALFWorld-v0-opsd-seed1@tiny-s"]
    out = tmp_path / "merged"
    assert main(["report", str(tiny), str(small), str(large), str(other), "--out", str(out)]) == 1
    report = (out / "report.md").read_text()
    headings = ["sdgym/ALFWorld-v0@tiny-s", "sdgym/ALFWorld-v0@tiny", "sdgym/ALFWorld-v0@tiny-l",
                "sdgym/ScienceWorld-v0"]
    at = [report.find(f"\n## {heading}\n") for heading in headings]
    assert -1 not in at and at == sorted(at), at  # by env, then smallest size first
    assert "4 setting(s)" in report and "train-ALFWorld-v0-opsd-seed1@tiny-s" in report
    assert (out / "curves-ALFWorld-v0@tiny-l.png").exists()
    table = report.split("## All settings")[1].split("\n## ")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert rows[0] == "| size | method | ALFWorld-v0 | ScienceWorld-v0 |"
    sizes = [row.split(" | ")[0].lstrip("| ") for row in rows[1:]]
    assert sizes == ["tiny-s"] * 3 + ["tiny"] * 4 + ["tiny-l"] * 4  # smallest first
    assert rows[1].startswith("| tiny-s | sft-start | ") and rows[1].endswith(" | – |")
    assert "| tiny | sdar | **" in table and "| tiny-l | sdar | **" in table  # best per setting
    for size in ("tiny-s", "tiny", "tiny-l"):  # the baseline is in every setting of its env
        section = report.split(f"## sdgym/ALFWorld-v0@{size}\n")[1].split("\n## ")[0]
        assert "\n| random | baseline |" in section


def test_one_size_in_two_folders_must_agree_and_their_cells_keep_their_size(tmp_path) -> None:
    a = _run_folder(tmp_path, "a", "sdgym/WebShop-v0", methods=("grpo",), size="tiny-l",
                    failed=["train-WebShop-v0-sdar-seed0"])
    b = _run_folder(tmp_path, "b", "sdgym/WebShop-v0", methods=("sdar",), size="tiny-l", steps=16)
    with pytest.raises(ValueError, match=re.escape("WebShop-v0@tiny-l: budget (steps) differs")):
        merge_runs([a, b])
    b = _run_folder(tmp_path, "c", "sdgym/WebShop-v0", methods=("opsd",), size="tiny-l")
    result = merge_runs([a, b])  # the two parts of one setting, as cpu-webshop-tiny-l's
    assert result["failures"] == [{"cell": "train-WebShop-v0-sdar-seed0@tiny-l",
                                   "error": "RuntimeError: boom"}]
    assert "start-WebShop-v0-sft-start-seed0@tiny-l: in several folders, taken from the first" \
        in result["notes"]
    # a folder with no record of its env still plans at its size (plan.json's model_sizes)
    empty = tmp_path / "empty"
    (empty / "cells").mkdir(parents=True)
    (empty / PLAN_FILE).write_text(json.dumps({"cells": ["train-WebShop-v0-rlsd-seed0"],
                                               "model_sizes": {"sdgym/WebShop-v0": "tiny-l"}}))
    result = merge_runs([a, empty])
    assert "train-WebShop-v0-rlsd-seed0@tiny-l" in result["missing"]


def test_size_order_and_keys() -> None:
    from benchmarks.protocol.merge import setting_key, size_order, split_setting

    names = ["Qwen3.5-9B", "tiny-l", "Qwen3.5-27B", "tiny", "tiny-s", "Qwen3.5-2B"]
    assert sorted(names, key=size_order) == ["tiny-s", "tiny", "tiny-l", "Qwen3.5-2B",
                                             "Qwen3.5-9B", "Qwen3.5-27B"]
    assert setting_key("sdgym/SearchQA-v0", "tiny") == "sdgym/SearchQA-v0"
    assert split_setting(setting_key("sdgym/SearchQA-v0", "tiny-s")) == ("sdgym/SearchQA-v0",
                                                                         "tiny-s")


def _table(envs=("sdgym/ALFWorld-v0", "sdgym/ScienceWorld-v0")):
    records = [_record(env, m, s) for env in envs for m in METHODS for s in (0, 1)]
    records += [_record(env, "sft-start", s, kind="start") for env in envs for s in (0, 1)]
    table = summarise(records, "flops")
    return table, comparisons(table)


def test_settings_table_marks_the_best_and_the_worse_than_grpo() -> None:
    table, compared = _table()
    lines = settings_table_lines(table, compared)
    assert lines[2] == "| size | method | ALFWorld-v0 | ScienceWorld-v0 |"
    rows = {line.split(" | ")[1]: line for line in lines if line.startswith("| ")}
    assert list(rows)[:3] == ["method", "sft-start", "grpo"]
    assert all(line.startswith("| tiny | ") for line in list(rows.values())[1:])  # no model_size
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


def _cached_part(root: Path, folder: Path, name: str, env_id: str, methods: list[str]) -> Path:
    """A part preset file (cpu-smoke's shape on ``env_id``, no baselines) and its run folder with
    every planned cell finished (hand-made records stamped with the preset's fingerprint)."""
    from benchmarks.protocol.matrix import load_benchmark_preset, plan, preset_fingerprint

    path = root / f"{name}-bench.toml"
    path.write_text(f'extends = "cpu-smoke-bench"\nenvs = ["{env_id}"]\nmethods = {methods!r}\n'
                    "baseline_envs = []\n".replace("'", '"'))
    preset = load_benchmark_preset(str(path))
    fingerprint = preset_fingerprint(preset)
    for cell in plan(preset)[0]:
        record = _record(env_id, cell.method, cell.seed, kind=cell.kind)
        assert record["cell"] == cell.key
        record["preset_fingerprint"] = fingerprint
        (folder / name / "cells" / cell.key).mkdir(parents=True)
        (folder / name / "cells" / cell.key / "result.json").write_text(json.dumps(record))
    return path


def test_a_suite_runs_its_parts_into_their_folders_and_merges_them(tmp_path, capsys) -> None:
    """``sdgym benchmark --preset SUITE``: each part resumes in ``OUT/<part>`` (all cells cached
    here, so nothing trains) and one report covers every part's setting."""
    out = tmp_path / "out"
    parts = [_cached_part(tmp_path, out, "alf", "sdgym/ALFWorld-v0", ["grpo", "sdar"]),
             _cached_part(tmp_path, out, "web", "sdgym/WebShop-v0", ["grpo", "sdar"])]
    suite = tmp_path / "two.toml"
    suite.write_text(f'title = "two settings"\nparts = ["{parts[0]}", "{parts[1]}"]\n')
    assert main(["benchmark", "--preset", str(suite), "--out", str(out), "--jobs", "1"]) == 0
    report = (out / "report.md").read_text()
    assert report.startswith("# two settings") and "2 setting(s)" in report
    assert "## sdgym/ALFWorld-v0" in report and "## sdgym/WebShop-v0" in report
    assert (out / "alf" / "report.md").exists() and (out / "web" / "report.md").exists()
    assert len((out / "results.jsonl").read_text().splitlines()) == 2 * 3
    printed = capsys.readouterr().out
    progress = [line for line in printed.splitlines() if re.match(r"\[\d+/\d+\]", line)]
    assert len(progress) == 2 * 3
    assert all("cached" in line and ("ETA" in line or "all cells done" in line)
               for line in progress)  # each a whole line, not wrapped at 80 columns


def test_a_suite_naming_an_unknown_part_is_refused_in_one_line(tmp_path, capsys) -> None:
    suite = tmp_path / "bad.toml"
    suite.write_text('parts = ["cpu-alfworld", "no-such-preset"]\n')
    assert main(["benchmark", "--preset", str(suite), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown benchmark preset 'no-such-preset'" in err and len(err.splitlines()) == 1


def test_shipped_suites_name_existing_presets_and_no_suite_shadows_a_preset() -> None:
    from benchmarks.protocol.matrix import available_benchmark_presets, load_benchmark_preset
    from benchmarks.protocol.suite import available_suites, load_suite

    assert "cpu-four-settings" in available_suites()
    presets = {name.removesuffix("-bench") for name in available_benchmark_presets()}
    for name in available_suites():
        suite = load_suite(name)
        assert suite is not None and {p.name for p in suite.presets} <= presets
        assert name not in presets
    four = load_suite("cpu-four-settings")
    envs = {env for part in four.parts for env in load_benchmark_preset(part).envs}
    assert envs == {"sdgym/ALFWorld-v0", "sdgym/ScienceWorld-v0", "sdgym/SearchQA-v0",
                    "sdgym/WebShop-v0"}


def test_progress_lines_count_cells_and_estimate_the_rest_from_cells_run_here() -> None:
    from types import SimpleNamespace

    from benchmarks.protocol.progress import CellProgress

    now = [0.0]
    lines: list[str] = []
    progress = CellProgress(4, lines.append, clock=lambda: now[0])
    progress(SimpleNamespace(key="a"), "cached")  # no time spent here: no ETA from it
    now[0] = 100.0
    progress(SimpleNamespace(key="b"), "done")
    now[0] = 200.0
    progress(SimpleNamespace(key="c"), "failed")
    now[0] = 290.0
    progress(SimpleNamespace(key="d"), "done")
    assert lines[0] == "[1/4]  cached  a  elapsed 0s  ETA -"
    assert lines[1] == "[2/4]    done  b  elapsed 1m40s  ETA 3m20s"  # 100 s per cell run, 2 left
    assert lines[2] == "[3/4]  failed  c  elapsed 3m20s  ETA 1m40s"
    assert lines[3] == "[4/4]    done  d  elapsed 4m50s  all cells done"


def test_a_dry_run_of_a_suite_creates_no_folder(tmp_path, capsys) -> None:
    out = tmp_path / "four"
    assert main(["benchmark", "--preset", "cpu-four-settings", "--out", str(out), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "part 1 of 9: cpu-alfworld-part-1" in printed and "part 9 of 9: cpu-premise" in printed
    assert not out.exists()


def _merged_report(tmp_path: Path) -> Path:
    a = _run_folder(tmp_path, "alf", "sdgym/ALFWorld-v0")
    b = _run_folder(tmp_path, "sw", "sdgym/ScienceWorld-v0")
    out = tmp_path / "merged"
    assert main(["report", str(a), str(b), "--out", str(out)]) == 0
    return out


def test_report_html_is_one_self_contained_file_with_the_reports_content(tmp_path) -> None:
    out = _merged_report(tmp_path)
    page = (out / "report.html").read_text()
    markdown = (out / "report.md").read_text()
    figures = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", markdown)
    assert figures and page.count('src="data:image/png;base64,') == len(figures)
    assert not re.search(r'src="(?!data:)', page) and "<script" not in page  # nothing outside
    assert page.count("<table>") == markdown.count("\n|---") and "2 setting(s)" in page
    assert "<title>" in page and "## " not in page  # headings rendered, not raw Markdown


def test_report_html_opens_in_headless_chromium_with_its_figures(tmp_path) -> None:
    from sdgym.envs.webshop.chromium import Chromium, browser_unavailable_reason

    reason = browser_unavailable_reason()
    if reason:
        pytest.skip(reason)
    out = _merged_report(tmp_path)
    browser = Chromium()
    try:
        browser.driver.get((out / "report.html").as_uri())
        widths = browser.driver.execute_script(
            "return Array.from(document.images).map(i => i.complete ? i.naturalWidth : 0)")
        assert widths and all(width > 0 for width in widths)  # every figure decoded
        assert browser.driver.execute_script("return document.querySelectorAll('table').length")
        assert "sdgym merged report" in browser.driver.title
    finally:
        browser.quit()


def test_an_archived_run_keeps_only_results_and_reads_and_resumes_as_a_run(tmp_path) -> None:
    """The archive drops checkpoints, keeps every cell's record; `sdgym report` reads it and a
    suite resumes from it with nothing to run."""
    from benchmarks.protocol.archive import archive_run

    out = tmp_path / "out"
    part = _cached_part(tmp_path, out, "alf", "sdgym/ALFWorld-v0", ["grpo", "sdar"])
    (out / "alf" / "runs" / "x").mkdir(parents=True)
    (out / "alf" / "runs" / "x" / "model.safetensors").write_bytes(b"0" * 1000)
    (out / "alf" / "report.md").write_text("# r\n")
    kept = tmp_path / "results" / "alf"
    assert archive_run(out / "alf", kept) == 3  # cpu-smoke has one seed: start, grpo, sdar
    assert not (kept / "runs").exists() and (kept / "report.md").exists()
    assert main(["report", str(kept), "--out", str(tmp_path / "merged")]) == 0
    back = tmp_path / "again"
    archive_run(kept, back / "alf")
    suite = tmp_path / "one.toml"
    suite.write_text(f'parts = ["{part}"]\n')
    assert main(["benchmark", "--preset", str(suite), "--out", str(back), "--jobs", "1"]) == 0
    with pytest.raises(ValueError, match="not a benchmark run folder"):
        archive_run(tmp_path / "nothing", kept)


def test_an_archived_failure_keeps_each_error_without_the_machines_paths(tmp_path) -> None:
    """A failed cell's tracebacks name the paths of the machine that ran it: the archive keeps
    each attempt's error line (what `sdgym report` shows) and drops the frames."""
    from benchmarks.protocol.archive import archive_run
    from benchmarks.protocol.merge import read_run

    cell = tmp_path / "run" / "cells" / "baseline-X-v0-random-seed0"
    cell.mkdir(parents=True)
    trace = ('Traceback (most recent call last):\n  File "/home/me/sdgym/core.py", line 1, in '
             "reset\nValueError: split 'easy_train' has no tasks\n")
    (cell / "failure.json").write_text(json.dumps({"cell": cell.name, "errors": [trace, trace]}))
    assert archive_run(tmp_path / "run", tmp_path / "kept") == 1
    kept = json.loads((tmp_path / "kept" / "cells" / cell.name / "failure.json").read_text())
    assert kept == {"cell": cell.name, "errors": ["ValueError: split 'easy_train' has no tasks"] * 2}
    assert read_run(tmp_path / "kept")["failures"] == read_run(tmp_path / "run")["failures"]
