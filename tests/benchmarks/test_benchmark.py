"""``sdgym benchmark``: the matrix is resumable, failures are reported, the report matches the raw data."""

from __future__ import annotations

import dataclasses
import json

import pytest

from benchmarks.protocol.matrix import (
    BenchmarkPreset,
    Cell,
    _premise_contexts,
    available_benchmark_presets,
    cell_config,
    installed_envs,
    load_benchmark_preset,
    plan,
    run_cell,
    run_matrix,
)
from benchmarks.protocol.report import summarise, write_report


def _auc(curve: list[list[float]], horizon: float) -> float:
    """Trapezoid AUC written out independently of baselines.metrics."""
    total = 0.0
    for (s0, v0), (s1, v1) in zip(curve, curve[1:]):
        total += (s1 - s0) * (v0 + v1) / 2.0
    return total / horizon


def _fake_runner(cell, preset, out):
    """40 panel tasks × 2 rollout seeds; sdar wins 70% of them, GRPO 40%, at twice the cost."""
    if cell.method == "broken":
        raise RuntimeError("cell exploded")
    curve = [[0, 0.0], [5, 0.5], [10, 0.25]] if cell.kind == "train" else []
    rate = 0.7 if cell.method == "sdar" else 0.4
    outcomes = [{"task_index": t, "task_id": f"t{t}", "rollout_seed": r,
                 "success": (t * 7 + r * 3) % 10 < rate * 10, "score": 0.0}
                for t in range(40) for r in range(2)]
    per_seed = [sum(o["success"] for o in outcomes if o["rollout_seed"] == r) / 40 for r in (0, 1)]
    return {"kind": cell.kind, "env_id": cell.env_id, "method": cell.method, "seed": cell.seed,
            "success_per_seed": per_seed, "outcomes": outcomes, "validation": curve,
            "auc": _auc(curve, 10) if curve else None,
            "train_seconds": 20.0 if cell.method == "sdar" else 10.0,
            "train_cpu_seconds": 19.0 if cell.method == "sdar" else 9.5,
            "train_flops_estimate": 3.0e9 if cell.method == "sdar" else 2.0e9, "cell": cell.key}


def test_a_cell_that_runs_out_of_disk_waits_and_retries_without_using_up_its_retries(
        tmp_path, monkeypatch) -> None:
    import errno

    from benchmarks.protocol import matrix

    waits: list[float] = []
    monkeypatch.setattr(matrix.time, "sleep", waits.append)
    preset = BenchmarkPreset(name="t", train_preset="cpu-smoke", envs=["sdgym/SearchQA-v0"],
                             methods=["grpo"], seeds=[0], retries=0, disk_full_retries=3,
                             disk_full_wait_seconds=5.0)
    cell = plan(preset)[0][-1]
    failures = iter([2, 1, 0])  # the disk frees after two bursts

    def filling(cell, preset, out):
        if next(failures):
            try:  # as a copy of a planner library into /tmp failed: wrapped by the caller
                raise OSError(errno.ENOSPC, "No space left on device", "libdownward.so")
            except OSError as full:
                raise RuntimeError("could not set up the planner") from full
        return _fake_runner(cell, preset, out)

    record, errors = matrix.attempt_cell(cell, preset, tmp_path, filling)
    assert record is not None and record["cell"] == cell.key
    assert waits == [5.0, 10.0] and len(errors) == 2  # doubling waits; retries=0 untouched
    assert "No space left on device" in errors[0]

    def always_full(cell, preset, out):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x"))

    waits.clear()
    record, errors = matrix.attempt_cell(cell, preset, tmp_path, always_full)
    assert record is None and len(errors) == 4 and waits == [5.0, 10.0, 20.0]

    def crashing(cell, preset, out):
        raise ValueError("a real bug")

    waits.clear()
    record, errors = matrix.attempt_cell(cell, preset, tmp_path, crashing)
    assert record is None and len(errors) == 1 and waits == []  # no back-off for a bug


def test_matrix_skips_finished_cells_and_records_failures(tmp_path) -> None:
    preset = BenchmarkPreset(name="t", train_preset="cpu-smoke", envs=["sdgym/SearchQA-v0"],
                             methods=["grpo", "sdar", "broken"], seeds=[0], retries=1)
    calls = []

    def counting(cell, preset, out):
        calls.append(cell.key)
        return _fake_runner(cell, preset, out)

    first = run_matrix(preset, tmp_path, runner=counting)
    assert len(first["records"]) == 3 and len(first["failures"]) == 1
    assert calls.count("train-SearchQA-v0-broken-seed0") == 2  # tried, retried, recorded
    assert (tmp_path / "cells" / "train-SearchQA-v0-broken-seed0" / "failure.json").exists()
    calls.clear()
    second = run_matrix(preset, tmp_path, runner=counting)
    assert calls == ["train-SearchQA-v0-broken-seed0"] * 2  # finished cells are skipped
    report = write_report(second, tmp_path, "test").read_text()
    assert "train-SearchQA-v0-broken-seed0" in report and "cell exploded" in report
    table = summarise(second["records"])["sdgym/SearchQA-v0"]
    assert table["sdar"]["cost_ratio"] == pytest.approx(1.5)  # on model FLOPs, the CPU default
    assert table["sdar"]["ratios"] == pytest.approx({"flops": 1.5, "cpu": 2.0, "wall": 2.0})
    by_cpu = summarise(second["records"], "cpu")["sdgym/SearchQA-v0"]
    assert by_cpu["sdar"]["cost_ratio"] == pytest.approx(2.0)
    with pytest.raises(ValueError, match="unknown cost measure 'joules'"):
        summarise(second["records"], "joules")
    assert table["sdar"]["final"].point == pytest.approx(0.7)
    assert "**1 of 1 methods beat GRPO**" in report and "sdar (1/1)" in report
    assert "1 training seed(s) × 40 test tasks" in report
    assert "**1 of 1 method-vs-GRPO comparisons took more training cost** (model FLOPs)" in report
    sdar = next(x for x in report.splitlines() if x.startswith("| sdar |"))
    assert "| 1 × 40 × 2 |" in sdar and "0.700 [" in sdar and "+0.300 [+" in sdar
    assert "| 3e+09 | 1.50 | CPU s 2.00 · wall s 2.00 |" in sdar
    by_wall = write_report(second, tmp_path / "wall", "test", "wall").read_text()
    assert "comparisons took more training cost** (wall seconds)" in by_wall
    assert "SearchQA-v0: GRPO is not distinguishable from its warm start, Δ +0.000" in report
    power = next(x for x in report.splitlines() if "**Power**" in x)
    assert "(target ±0.05)" in power and "targets not met" in power  # 40 tasks cannot give ±0.05


def test_the_plan_records_the_model_size_of_each_trained_env(tmp_path) -> None:
    """plan.json names each trained env's model size, so a merge knows the setting of cells
    that never finished (#41)."""
    preset = BenchmarkPreset(name="t", train_preset="cpu-smoke",
                             envs=["sdgym/SearchQA-v0", "sdgym/WebShop-v0"], methods=["broken"],
                             seeds=[0], retries=0,
                             train_presets={"sdgym/WebShop-v0": "cpu-mini-webshop-tiny-l"})
    run_matrix(preset, tmp_path, runner=lambda cell, preset, out: _fake_runner(
        Cell("train", cell.env_id, "broken", 0), preset, out))  # every cell fails at once
    plan_file = json.loads((tmp_path / "plan.json").read_text())
    assert plan_file["model_sizes"] == {"sdgym/SearchQA-v0": "tiny-96x3",
                                        "sdgym/WebShop-v0": "tiny-l"}


def test_matrix_reruns_cells_made_under_other_settings(tmp_path) -> None:
    preset = BenchmarkPreset(name="t", train_preset="cpu-smoke", envs=["sdgym/SearchQA-v0"],
                             methods=["grpo"], seeds=[0])
    calls = []

    def counting(cell, preset, out):
        calls.append(cell.key)
        return _fake_runner(cell, preset, out)

    run_matrix(preset, tmp_path, runner=counting)
    once = sorted(calls)
    assert "train-SearchQA-v0-grpo-seed0" in once
    run_matrix(preset, tmp_path, runner=counting)
    assert sorted(calls) == once  # same settings: every cell cached
    preset.train_overrides = {"steps": 3}
    changed = run_matrix(preset, tmp_path, runner=counting)
    assert sorted(calls) == sorted(once * 2)  # other settings: every cell re-run
    assert any("other preset settings" in note for note in changed["notes"])


def test_fingerprint_changes_with_the_shipped_warm_starts_weights(tmp_path, monkeypatch) -> None:
    """A warm start rebuilt under the same name (other weights) makes every cell trained from it
    re-run: its weights are part of the fingerprint, not only the preset files."""
    import agents.warm_starts as warm_starts
    from benchmarks.protocol.matrix import preset_fingerprint

    preset = load_benchmark_preset("cpu-mini")  # trains from the shipped searchqa-hasty-sft
    folder = tmp_path / "searchqa-hasty-sft"
    folder.mkdir()
    weights = folder / "model.safetensors"
    weights.write_bytes(b"first weights")
    monkeypatch.setattr(warm_starts, "shipped_warm_starts",
                        lambda: {"searchqa-hasty-sft": folder})
    before = preset_fingerprint(preset)
    assert preset_fingerprint(preset) == before
    weights.write_bytes(b"other weights")
    assert preset_fingerprint(preset) != before


def test_plan_notes_envs_that_are_not_installed() -> None:
    preset = BenchmarkPreset(name="t", train_preset="cpu-smoke", envs=["sdgym/Nope-v0"],
                             methods=["grpo"], seeds=[0], baseline_envs=["sdgym/Nope-v0"])
    cells, notes = plan(preset)
    assert cells == [] and len(notes) == 2


def test_benchmark_presets_load() -> None:
    preset = load_benchmark_preset("cpu-mini")
    from baselines.heads import available_heads

    assert sorted(preset.methods) == sorted(available_heads())  # GRPO and every head
    with pytest.raises(ValueError, match="unknown benchmark preset"):
        load_benchmark_preset("nope")


def test_benchmark_env_kwargs_and_overrides_merge_over_the_training_preset(tmp_path,
                                                                           monkeypatch) -> None:
    """A benchmark's env kwargs set keys over the training preset's (a key it does not name keeps
    the preset's value), baseline-only kwargs stay out of trained cells, and per-env overrides
    merge into the shared ones section by section."""
    preset = BenchmarkPreset(
        name="t", train_preset="cpu-mini", envs=["sdgym/SearchQA-v0", "sdgym/WebShop-v0"],
        methods=["grpo"], seeds=[0], train_presets={"sdgym/WebShop-v0": "cpu-mini-webshop"},
        env_kwargs={"sdgym/WebShop-v0": {"max_episode_steps": 5}},
        baseline_env_kwargs={"sdgym/WebShop-v0": {"size": "tiny"}},
        train_overrides={"steps": 3, "evaluation": {"test_episodes": 400, "test_seeds": 2}},
        train_overrides_per_env={"sdgym/WebShop-v0": {"evaluation": {"test_episodes": 114}}})
    webshop = cell_config(Cell("train", "sdgym/WebShop-v0", "grpo", 0), preset, tmp_path)
    assert webshop.env_kwargs == {"size": "full", "max_episode_steps": 5}  # size from the preset
    assert (webshop.steps, webshop.evaluation.test_episodes, webshop.evaluation.test_seeds) == (
        3, 114, 2)
    assert webshop.evaluation.test_split == "easy_test"  # the WebShop training preset's own
    searchqa = cell_config(Cell("train", "sdgym/SearchQA-v0", "grpo", 0), preset, tmp_path)
    assert searchqa.env_kwargs == {"size": "small"} and searchqa.evaluation.test_episodes == 400
    seen: dict = {}

    def fake_baseline(env_id, algo, env_kwargs, **_):
        seen.update(env_kwargs)
        return {"success_per_seed": [0.0]}

    monkeypatch.setattr("baselines.reference.run.run_baseline", fake_baseline)
    run_cell(Cell("baseline", "sdgym/WebShop-v0", "random", 0), preset, tmp_path)
    assert seen == {"max_episode_steps": 5, "size": "tiny"}


def test_paper_benchmark_keeps_each_training_presets_episode_limit(tmp_path) -> None:
    """The paper matrix names no env kwargs, so each env's training preset keeps its own."""
    preset = load_benchmark_preset("paper-qwen3.5-2b")
    limits = {env: cell_config(Cell("train", env, "grpo", 0), preset, tmp_path)
              .env_kwargs.get("max_episode_steps") for env in preset.envs}
    assert limits == {"sdgym/ALFWorld-v0": 50, "sdgym/ScienceWorld-v0": 30,
                      "sdgym/SearchQA-v0": 4, "sdgym/WebShop-v0": 15}


@pytest.mark.slow
def test_cpu_smoke_benchmark_end_to_end(smoke_run) -> None:
    out, printed = smoke_run
    assert "![cost-vs-delta](cost-vs-delta.png)" in printed  # printed as written
    report = (out / "report.md").read_text()
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    preset = load_benchmark_preset("cpu-smoke")
    assert {r["method"] for r in records} >= set(preset.methods) | {"sft-start", "random", "expert"}
    assert (out / "curves-SearchQA-v0.png").stat().st_size > 0
    assert (out / "cost-vs-delta.png").exists() and (out / "profile-SearchQA-v0.png").exists()
    for record in records:
        if record["kind"] != "train":
            continue
        horizon = max(s for s, _ in record["validation"])
        assert record["auc"] == pytest.approx(_auc(record["validation"], horizon), abs=1e-9)
        line = next(x for x in report.splitlines() if x.startswith(f"| {record['method']} |"))
        assert record["model_name"] == "tiny" and line.split(" | ")[2] == "tiny"
        assert record["model_size"] == "tiny-96x3"  # the test model's shape: one size, bare keys
        mean = sum(o["success"] for o in record["outcomes"]) / len(record["outcomes"])
        assert f"{mean:.3f} [" in line and f"{record['auc']:.3f}" in line
        assert record["train_cpu_seconds"] > 0
    start = next(x for x in report.splitlines() if x.startswith("| sft-start |"))
    assert start.split(" | ")[8] == "–"  # no validation curve, so no AUC
    assert "nothing: every planned cell finished" in report


def _pid_runner(cell, preset, out):
    """The fake cell, plus the process that ran it (module level: picklable for workers)."""
    import os

    return {**_fake_runner(cell, preset, out), "pid": os.getpid()}


def test_worker_processes_give_the_one_after_another_records(tmp_path) -> None:
    import os

    preset = BenchmarkPreset(name="t", train_preset="cpu-smoke", envs=["sdgym/SearchQA-v0"],
                             methods=["grpo", "sdar", "broken"], seeds=[0, 1], retries=1)
    alone = run_matrix(preset, tmp_path / "alone", runner=_pid_runner)
    seen: list[str] = []
    pooled = run_matrix(preset, tmp_path / "pooled", runner=_pid_runner, jobs=2,
                        on_cell=lambda cell, status: seen.append(status))
    strip = [{k: v for k, v in r.items() if k not in ("pid", "wall_seconds")}
             for r in alone["records"]]
    assert [{k: v for k, v in r.items() if k not in ("pid", "wall_seconds")}
            for r in pooled["records"]] == strip  # same records, in plan order
    pids = {r["pid"] for r in pooled["records"]}
    assert os.getpid() not in pids and len(pids) <= 2  # two workers, reused across 6 cells
    assert [f["cell"] for f in pooled["failures"]] == [
        "train-SearchQA-v0-broken-seed0", "train-SearchQA-v0-broken-seed1"]
    assert sorted(seen) == ["done"] * 6 + ["failed"] * 2
    assert (tmp_path / "pooled" / "cells" / "train-SearchQA-v0-broken-seed1" /
            "failure.json").exists()


def _killing_runner(cell, preset, out):
    """Kills its own worker (as the out-of-memory killer does) on the ``sdar`` cells: once for
    seed 0 (a marker file remembers), every time for seed 1."""
    import os
    import signal

    marker = out / f"killed-{cell.key}"
    if cell.method == "sdar" and (cell.seed == 1 or not marker.exists()):
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return _fake_runner(cell, preset, out)


def test_a_killed_worker_fails_only_the_cell_that_keeps_killing_it(tmp_path) -> None:
    preset = BenchmarkPreset(name="t", train_preset="cpu-smoke", envs=["sdgym/SearchQA-v0"],
                             methods=["grpo", "sdar", "rlsd"], seeds=[0, 1, 2], retries=0)
    result = run_matrix(preset, tmp_path, runner=_killing_runner, jobs=2)
    assert [f["cell"] for f in result["failures"]] == ["train-SearchQA-v0-sdar-seed1"]
    assert "worker process" in result["failures"][0]["error"]
    done = {r["cell"] for r in result["records"]}
    assert len(done) == len(plan(preset)[0]) - 1  # every queued cell ran, sdar seed 0 on retry
    assert "train-SearchQA-v0-sdar-seed0" in done  # its neighbours in flight were not blamed


@pytest.mark.slow
def test_reduced_cpu_power_reports_every_planned_cell_and_seed(tmp_path) -> None:
    """cpu-power (cpu-mini's Search-QA cells plus WebShop's) cut down -- two methods, one
    baseline env, tiny panels, 1 step -- but with its three training seeds, both warm starts and
    its worker processes: every planned cell is in the results, and each trained row of each env
    rests on all seeds with an interval."""

    full = load_benchmark_preset("cpu-power")
    preset = dataclasses.replace(
        full, methods=["grpo", "sdar"], baseline_envs=["sdgym/SearchQA-v0"], ppo_envs=[],
        baseline_episodes=4, baseline_seeds=2,
        train_overrides={**full.train_overrides, "steps": 1, "infra": {"checkpoint_every": 1},
                         "evaluation": {**full.train_overrides["evaluation"], "val_every": 1,
                                        "val_episodes": 8, "test_episodes": 12}},
        train_overrides_per_env={"sdgym/WebShop-v0": {"evaluation": {"test_episodes": 10}}})
    cells, _ = plan(preset)
    result = run_matrix(preset, tmp_path, jobs=2)
    assert not result["failures"] and result["planned"] == len(cells) == 2 + 2 * 3 * 3
    assert sorted(r["cell"] for r in result["records"]) == sorted(c.key for c in cells)
    report = write_report(result, tmp_path, "reduced cpu-power").read_text()
    rollouts = full.train_overrides["evaluation"]["test_seeds"]
    for env_id, tasks in (("sdgym/SearchQA-v0", 12), ("sdgym/WebShop-v0", 10)):
        section = report.split(f"## {env_id}")[1].split("## ")[0]
        for method in ("sft-start", "grpo", "sdar"):
            line = next(x for x in section.splitlines() if x.startswith(f"| {method} |"))
            assert f"| {len(full.seeds)} × {tasks} × {rollouts} |" in line, line
            assert "[" in line.split(" | ")[4], line
        sdar = summarise(result["records"])[env_id]["sdar"]
        assert sdar["seeds"] == 3 and sdar["auc"].low is not None  # AUC interval over seeds
    assert "**RL effect**" in report and "**Power**" in report and "2 setting(s)" in report


def test_stability_line_names_the_setting_of_each_method_when_there_are_several() -> None:
    from benchmarks.protocol.report import stability_lines

    def row(drop: float, spread: float) -> dict:
        return {"kind": "train", "largest_drop": drop, "auc_spread": spread}

    two = {"sdgym/SearchQA-v0": {"grpo": row(0.1, 0.05)},
           "sdgym/WebShop-v0": {"grpo": row(0.3, 0.20)}}
    [line] = stability_lines(two)
    assert "grpo (WebShop-v0) 0.30" in line  # the unstable one, with its setting
    assert "grpo (SearchQA-v0) 0.05" in line and "grpo (WebShop-v0) 0.20" in line
    [single] = stability_lines({"sdgym/SearchQA-v0": {"grpo": row(0.1, 0.05)}})
    assert "none" in single and "grpo 0.05" in single


def test_power_line_gives_each_setting_its_own_verdict() -> None:
    from benchmarks.protocol.report import power_lines
    from benchmarks.protocol.statistics import Comparison, Interval

    def trained(half: float) -> dict:
        return {"kind": "train", "final": Interval(0.4, 0.4 - half, 0.4 + half)}

    def versus_grpo(env: str, half: float) -> Comparison:
        return Comparison(env, "sdar", Interval(0.0, -half, half), Interval(0.5), 1.4, 3, 100)

    table = {"sdgym/SearchQA-v0": {"grpo": trained(0.04), "sdar": trained(0.03)},
             "sdgym/WebShop-v0": {"grpo": trained(0.08), "sdar": trained(0.07)}}
    compared = [versus_grpo("sdgym/SearchQA-v0", 0.03), versus_grpo("sdgym/WebShop-v0", 0.06)]
    [line] = power_lines(table, compared)
    assert "widest test-success interval ±0.080" in line and "targets not met" in line
    assert "SearchQA-v0 ±0.040 / ±0.030 (met)" in line
    assert "WebShop-v0 ±0.080 / ±0.060 (not met)" in line
    [one] = power_lines({"sdgym/SearchQA-v0": table["sdgym/SearchQA-v0"]}, compared[:1])
    assert "targets met." in one and "per setting" not in one


NEW_ENV_SETTINGS = {"sdgym/ALFWorld-v0": "cpu-alfworld", "sdgym/ScienceWorld-v0": "cpu-scienceworld-v2"}
"""#39: the preset of each new env's whole setting in the cpu-four-settings suite; its parts
(``<preset>-part-1``, ...) are sized to run in under an hour here."""

EARLIER_PROTOCOLS = {"cpu-scienceworld": "sdgym/ScienceWorld-v0"}
"""Whole settings under an earlier protocol, split into parts the same way, no longer in the suite
(their archived runs stay reproducible)."""


@pytest.mark.parametrize(("env_id", "setting"), [
    *sorted(NEW_ENV_SETTINGS.items()), *((env, name) for name, env in EARLIER_PROTOCOLS.items())])
def test_each_new_env_setting_splits_into_parts_that_together_are_the_whole(
        env_id: str, setting: str, tmp_path) -> None:
    """A new env's parts train every method of the whole setting once, on its seeds and under its
    protocol (so their folders merge into one setting); part 1 measures the premise of every
    context the whole setting's heads read and runs its reference baselines, the others neither;
    the cpu-four-settings suite runs every part of the settings it names."""
    from benchmarks.protocol.suite import load_suite

    whole = load_benchmark_preset(setting)
    names = sorted(name.removesuffix("-bench") for name in available_benchmark_presets()
                   if name.startswith(f"{whole.name}-part-"))
    first, *rest = [load_benchmark_preset(name) for name in names]
    assert first.name.endswith("-part-1") and len(rest) >= 1
    assert sorted(m for part in (first, *rest) for m in part.methods) == sorted(whole.methods)
    cell = Cell("train", env_id, "grpo", 1)
    for part in (first, *rest):
        assert (part.envs, part.seeds, part.train_preset) == (whole.envs, whole.seeds,
                                                               whole.train_preset)
        assert cell_config(cell, part, tmp_path) == cell_config(cell, whole, tmp_path)
    assert first.premise and first.baseline_envs == whole.baseline_envs == [env_id]
    assert _premise_contexts(first) == _premise_contexts(whole)
    assert len(_premise_contexts(first)) > len(_premise_contexts(
        dataclasses.replace(first, premise_methods=[])))  # its own heads read fewer
    for part in rest:
        assert not part.premise and part.baseline_envs == []
    if env_id in installed_envs():
        kinds = {c.kind for c in plan(first)[0]}
        assert kinds == {"baseline", "premise", "start", "train"}
        assert all({c.kind for c in plan(part)[0]} == {"start", "train"} for part in rest)
    in_suite = set(names) & set(load_suite("cpu-four-settings").parts)
    assert in_suite == (set(names) if setting in NEW_ENV_SETTINGS.values() else set())


@pytest.mark.slow
@pytest.mark.parametrize("bench", ["cpu-alfworld", "cpu-scienceworld-v2"])
def test_reduced_new_env_bench_trains_heads_and_measures_their_premise(tmp_path, bench) -> None:
    """The ALFWorld / ScienceWorld benchmark presets cut down (GRPO and one teacher head, one
    seed, one step, tiny panels) but with their warm start, env settings, easy splits and premise
    cell: every planned cell finishes, and the report has the trained rows, the premise table of
    the context the head uses, and the RL-effect line."""

    full = load_benchmark_preset(bench)
    assert full.premise and len(full.methods) == 12 and full.seeds == [0, 1, 2]
    evaluation = {**full.train_overrides.get("evaluation", {}), "val_every": 1, "val_episodes": 2,
                  "test_episodes": 2, "test_seeds": 1}
    preset = dataclasses.replace(
        full, methods=["grpo", "opid"], seeds=[0], baseline_episodes=2, baseline_seeds=1,
        premise_episodes=2, premise_pool_seeds=1,
        train_overrides={**full.train_overrides, "steps": 1, "evaluation": evaluation,
                         "rollout": {"num_groups": 1, "group_size": 2}})
    cells, _ = plan(preset)
    assert sorted(c.kind for c in cells) == ["baseline", "baseline", "premise", "start", "train",
                                             "train"]
    result = run_matrix(preset, tmp_path)
    assert not result["failures"] and len(result["records"]) == len(cells)
    report = write_report(result, tmp_path, f"reduced {bench}").read_text()
    env_id = full.envs[0]
    section = report.split(f"## {env_id}")[1]
    for method in ("sft-start", "grpo", "opid", "random", "expert"):
        assert any(line.startswith((f"| {method} |", f"| {method} (premise not met) |"))
                   for line in section.splitlines()), method
    assert "Teacher premise at step 0" in section and "**RL effect**" in report
    premise = next(r for r in result["records"] if r["kind"] == "premise")
    from benchmarks.protocol.premise import context_heads, premise_rows

    assert {row.context for row in premise_rows(premise, preset.methods)} == set(
        context_heads(["opid"]))
