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
from pathlib import Path

HERE = Path(__file__).parent

RATIOS = [
    ("ALFWorld: walkthrough replay, sdgym (memoised) vs unmodified engine",
     "test_alfworld_bench.py::test_walkthrough_steps[sdgym]",
     "test_alfworld_bench.py::test_walkthrough_steps[raw]"),
    ("ScienceWorld: sdgym step (admissible off) vs raw scienceworld env.step",
     "test_scienceworld_bench.py::test_sdgym_step_admissible_off",
     "test_scienceworld_bench.py::test_raw_scienceworld_env_step"),
    ("ScienceWorld: sdgym step (admissible on) vs raw scienceworld env.step",
     "test_scienceworld_bench.py::test_sdgym_step_admissible_on",
     "test_scienceworld_bench.py::test_raw_scienceworld_env_step"),
    ("Search-QA: 256 batched queries vs 256 single queries (100k passages)",
     "test_searchqa_bench.py::test_bm25_batched_256_queries",
     ("test_searchqa_bench.py::test_bm25_single_queries", 256)),
    ("Search-QA: bm25s vs Lucene single query (100k passages)",
     "test_searchqa_bench.py::test_bm25_single_queries",
     "test_searchqa_bench.py::test_other_backends_single_queries[lucene]"),
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


def machine() -> str:
    """CPU model, cores and Python version (no paths)."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def _mean(stats: dict, name: str) -> float | None:
    """Mean seconds of the benchmark whose full name ends with ``name``."""
    for full, entry in stats.items():
        if full.endswith(name):
            return entry["mean"]
    return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-k", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "bench.json"
        command = [sys.executable, "-m", "pytest", str(HERE), "-q", "-p", "no:cacheprovider",
                   "--benchmark-only", f"--benchmark-json={report}"]
        if args.k:
            command += ["-k", args.k]
        subprocess.run(command, check=False)
        data = json.loads(report.read_text()) if report.exists() else {"benchmarks": []}
    stats = {b["fullname"]: {**b["stats"], **b.get("extra_info", {})} for b in data["benchmarks"]}
    lines = ["# Benchmark results", "",
             f"Measured {datetime.date.today().isoformat()} on {machine()}.", "",
             "## Ratios (measured in the same run)", "", "| comparison | ratio |", "|---|---|"]
    for label, fast, slow in RATIOS:
        fast, fast_repeat = fast if isinstance(fast, tuple) else (fast, 1)
        slow, slow_repeat = slow if isinstance(slow, tuple) else (slow, 1)
        a, b = _mean(stats, fast), _mean(stats, slow)
        value = (f"{(b * slow_repeat) / (a * fast_repeat):.2f}× faster" if a and b
                 else "not measured here")
        lines.append(f"| {label} | {value} |")
    lines += ["", "## All benchmarks (mean seconds per round)", "", "| benchmark | mean s | extra |",
              "|---|---|---|"]
    for name, entry in sorted(stats.items()):
        extra = {k: round(v, 3) for k, v in entry.items()
                 if k not in ("min", "max", "mean", "stddev", "rounds", "median", "iqr", "q1", "q3",
                              "iqr_outliers", "stddev_outliers", "outliers", "ld15iqr", "hd15iqr",
                              "ops", "total", "iterations", "data")
                 and isinstance(v, (int, float))}
        lines.append(f"| {name.removeprefix('benchmarks/')} | {entry['mean']:.6f} | {extra or ''} |")
    (HERE / "RESULTS.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
