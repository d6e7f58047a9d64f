"""Run every benchmark suite and write ``benchmarks/RESULTS.md`` (ratios measured in one run).

Usage: ``python benchmarks/run_all.py [-k EXPR]``. Suites whose extras are missing are skipped.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

HERE = Path(__file__).parent

RATIOS = [
    ("Search-QA: 256 batched queries vs 256 single queries (100k passages)",
     "test_searchqa_bench.py::test_bm25_batched_256_queries",
     ("test_searchqa_bench.py::test_bm25_single_queries", 256)),
    ("WebShop: expert episode without vs with the privileged channel",
     "test_webshop_bench.py::test_expert_episode_steps[plain]",
     "test_webshop_bench.py::test_expert_episode_steps[privileged]"),
    ("Vector Search-QA: env steps/s with 4 async envs vs 1",
     "test_vector_scaling.py::test_vector_steps[sdgym/SearchQA-v0-4-async]",
     ("test_vector_scaling.py::test_vector_steps[sdgym/SearchQA-v0-1-async]", 4)),
    ("GRPO training step (tiny model, 16 rows x 32 tokens): sdgym core vs TRL GRPOTrainer",
     "test_grpo_vs_trl_bench.py::test_grpo_step[sdgym]",
     "test_grpo_vs_trl_bench.py::test_grpo_step[trl]"),
    *[(f"Ray rollout Search-QA, {envs} sub-envs: env steps/s with {n} Ray worker(s) vs local",
       f"test_ray_rollout_bench.py::test_rollout_env_steps[ray{n}-{envs}envs]",
       f"test_ray_rollout_bench.py::test_rollout_env_steps[local-{envs}envs]")
      for envs in (8, 32) for n in (1, 2, 4)],
]


AB_RATIOS = [
    ("ALFWorld: walkthrough steps, sdgym (memoised) vs unmodified engine (27-receptacle kitchen)",
     "test_alfworld_bench.py::test_walkthrough_steps", "speedup", ()),
    ("ALFWorld: first reset of a game whose translation is on disk, sdgym vs unmodified engine",
     "test_alfworld_bench.py::test_first_reset_from_disk_cache", "speedup", ()),
    ("ALFWorld: first reset from the disk cache vs a repeated reset (1 = as fast)",
     "test_alfworld_bench.py::test_first_reset_from_disk_cache", "first_vs_repeat", ()),
    ("ScienceWorld: sdgym step (admissible off) vs raw scienceworld env.step",
     "test_scienceworld_bench.py::test_step_ratios_vs_raw_with_py4j_latency",
     "admissible_off_speedup", ("raw_py4j_call_us_median", "raw_steps_per_s")),
    ("ScienceWorld: sdgym step (admissible on every step) vs raw scienceworld env.step",
     "test_scienceworld_bench.py::test_step_ratios_vs_raw_with_py4j_latency",
     "admissible_on_speedup", ("raw_py4j_call_us_median", "raw_steps_per_s")),
    ("ScienceWorld: a validation panel's env work (8 new envs x 2 episodes), shared JVM vs a JVM "
     "per env", "test_scienceworld_bench.py::test_panel_shared_jvm_vs_one_jvm_per_env",
     "shared_jvm_speedup", ()),
    *[(f"Generation, {label}: HF backend fast path vs {anchor}",
       f"test_generation_bench.py::test_generation_speed[{shape}]", prefix,
       ("fast_tokens_per_s_median",))
      for shape, label in (("distinct64", "64 distinct prompts"),
                           ("grpo16x4", "GRPO-shaped 16 prompts x 4"),
                           ("searchqa64", "64 real Search-QA first-turn prompts"))
      for prefix, anchor in (("over_plain_loop", "the plain loop (previous path)"),
                             ("over_generate", "transformers generate()"))],
    ("GRPO step (tiny model, 4 prompts x 4, 32 tokens): sdgym vs TRL GRPOTrainer",
     "test_grpo_vs_trl_bench.py::test_grpo_step_ab", "over_trl", ()),
    ("GRPO step (same shape): sdgym vs its previous path (no prompt sharing or buckets)",
     "test_grpo_vs_trl_bench.py::test_grpo_step_ab", "over_previous_path", ()),
    ("A teacher head's extra forward (privileged-context prompts) vs a whole GRPO step: step / teacher",
     "test_teacher_forward_bench.py::test_teacher_forward_vs_grpo_step", "step_over_teacher",
     ("teacher_share_median", "teacher_share_max")),
    ("Test evaluation, 48 tasks x 8 rollout seeds: seeds batched (row streams) vs one seed per call",
     "test_panel_bench.py::test_batched_rollout_seeds_speedup", "speedup", ()),
    ("Generation on real Search-QA prompts (64 tasks, turns 1-2): common prefix run once vs in every prompt",
     "test_shared_prefix_bench.py::test_shared_prefix_generation_speedup", "speedup", ()),
    ("Update forward+backward on the same prompts and responses: common prefix run once vs in every row",
     "test_shared_prefix_bench.py::test_shared_prefix_update_speedup", "speedup", ()),
    ("Search-QA: bm25s vs warm Lucene, single query (100k passages)",
     "test_searchqa_bench.py::test_bm25_vs_warm_lucene_single_query", "speedup",
     ("top10_overlap", "lucene_warmup_queries")),
]
"""A/B ratios measured inside one benchmark (:mod:`ab_timing`): ``(label, benchmark, prefix of
its ``<prefix>_median/_min/_max/_rounds`` extras, extras shown beside)``."""


def _ab_ratio(entries: dict[str, dict], name: str, prefix: str, beside: tuple[str, ...]) -> str:
    extra = (entries.get(name) or {}).get("extra", {})
    if f"{prefix}_median" not in extra:
        return "not measured here"
    shown = "".join(f", {key} {extra[key]}" for key in beside if key in extra)
    return (f"{extra[f'{prefix}_median']:.2f}× ({extra[f'{prefix}_min']:.2f}–"
            f"{extra[f'{prefix}_max']:.2f}×), median (min–max) of {int(extra[f'{prefix}_rounds'])} "
            f"A/B rounds{shown} ({entries[name]['run']}){_missed(entries[name])}")


def _missed(*entries: dict) -> str:
    """A marker for a row whose benchmark failed its own assertion (its target) in that run."""
    return "; **target missed**" if any(e.get("outcome") == "failed" for e in entries) else ""


def outcomes(junit_xml: str) -> dict[str, str]:
    """``{benchmark name relative to benchmarks/: "passed" | "failed" | "skipped"}`` from a
    pytest ``--junitxml`` report (a benchmark that raised or missed its asserted target is
    "failed"; pytest-benchmark's JSON stores it all the same)."""
    found = {}
    for case in ElementTree.fromstring(junit_xml).iter("testcase"):
        parts = case.get("classname", "").split(".")
        module = next((i for i, part in enumerate(parts) if part.startswith("test_")), None)
        if module is None:
            continue
        name = "::".join([f"{parts[module]}.py", *parts[module + 1:], case.get("name", "")])
        kinds = {child.tag for child in case}
        found[name] = ("failed" if kinds & {"failure", "error"} else
                       "skipped" if "skipped" in kinds else "passed")
    return found


def machine() -> str:
    """CPU model, cores, last-level cache and Python version (no paths): a run's ratios depend
    on them (a decode step that is memory-bound with a 32 MB cache is not with a 480 MB one)."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    caches = list(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"))
    cache = ""
    try:
        if caches:
            size = max(caches, key=lambda c: int((c / "level").read_text())).joinpath(
                "size").read_text().strip()
            if size.endswith("K"):
                size = f"{int(size[:-1]) // 1024} MiB"
            cache = f", {size} last-level cache"
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores{cache}, Python {platform.python_version()}, "
            f"{platform.system()}")


STORE = HERE / "results.json"
"""Every benchmark's latest mean and extra info, with the run it came from (``-k`` reruns merge)."""

SUMMARY_KEYS = ("min", "max", "mean", "stddev", "rounds", "median", "iqr", "q1", "q3", "iqr_outliers",
                "stddev_outliers", "outliers", "ld15iqr", "hd15iqr", "ops", "total", "iterations", "data")


def _entries(data: dict, run: str, machine_text: str,
             outcome: dict[str, str] | None = None) -> dict[str, dict]:
    """pytest-benchmark JSON → ``{name: {"mean", "extra", "run", "machine", "outcome"}}`` (names
    relative to benchmarks/; ``outcome`` from :func:`outcomes`, "not recorded" where absent)."""
    outcome = outcome or {}
    entries = {}
    for bench in data["benchmarks"]:
        merged = {**bench["stats"], **bench.get("extra_info", {})}
        extra = {k: v if isinstance(v, int) else float(f"{v:.4g}") for k, v in merged.items()
                 if k not in SUMMARY_KEYS and isinstance(v, (int, float))}
        name = bench["fullname"].removeprefix("benchmarks/")
        entries[name] = {"mean": bench["stats"]["mean"], "extra": extra, "run": run,
                         "machine": machine_text, "outcome": outcome.get(name, "not recorded")}
    return entries


def _ratio(entries: dict[str, dict], fast: str | tuple, slow: str | tuple) -> str:
    fast, fast_repeat = fast if isinstance(fast, tuple) else (fast, 1)
    slow, slow_repeat = slow if isinstance(slow, tuple) else (slow, 1)
    a, b = entries.get(fast), entries.get(slow)
    if not a or not b:
        return "not measured here"
    if a["run"] != b["run"]:
        return "not measured in one run"
    ratio = (b["mean"] * slow_repeat) / (a["mean"] * fast_repeat)
    verdict = f"{ratio:.2f}× faster" if ratio >= 1 else f"{1 / ratio:.2f}× slower"
    return f"{verdict} ({a['run']}){_missed(a, b)}"


def render(entries: dict[str, dict]) -> str:
    """The RESULTS.md text for ``entries``; each run's machine is listed under "Runs"."""
    lines = ["# Benchmark results", "", "Rows with A/B rounds alternate "
             "the two sides inside one benchmark process (both warmed up) and give the median "
             "(min–max) of the per-round ratios; the other rows compare two benchmarks' means of "
             "one run. The run's date is in brackets; its machine is under Runs (ratios differ "
             "between machines); \"target missed\" marks a benchmark whose own asserted target "
             "failed in that run; `python benchmarks/run_all.py -k EXPR` "
             "reruns some suites and keeps the others' last numbers.", "",
             "## Ratios (measured in the same run)", "", "| comparison | ratio |", "|---|---|"]
    lines += [f"| {label} | {_ab_ratio(entries, name, prefix, beside)} |"
              for label, name, prefix, beside in AB_RATIOS]
    lines += [f"| {label} | {_ratio(entries, fast, slow)} |" for label, fast, slow in RATIOS]
    runs = {entry["run"]: entry.get("machine", "not recorded") for entry in entries.values()}
    lines += ["", "## Runs", "", "| run | machine |", "|---|---|"]
    lines += [f"| {run} | {runs[run]} |" for run in sorted(runs)]
    lines += ["", "## All benchmarks (mean seconds per round)", "",
              "| benchmark | mean s | extra | run | outcome |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {entry['mean']:.6f} | {entry['extra'] or ''} | {entry['run']} | "
              f"{entry.get('outcome', 'not recorded')} |" for name, entry in sorted(entries.items())]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-k", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        report, junit = Path(folder) / "bench.json", Path(folder) / "junit.xml"
        command = [sys.executable, "-m", "pytest", str(HERE), "-q", "-p", "no:cacheprovider",
                   "--benchmark-only", f"--benchmark-json={report}", f"--junitxml={junit}"]
        if args.k:
            command += ["-k", args.k]
        subprocess.run(command, check=False)
        data = json.loads(report.read_text()) if report.exists() else {"benchmarks": []}
        outcome = outcomes(junit.read_text()) if junit.exists() else {}
    run = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    entries = json.loads(STORE.read_text()) if STORE.exists() else {}
    entries.update(_entries(data, run, machine(), outcome))
    STORE.write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n")
    text = render(entries)
    (HERE / "RESULTS.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
