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
    ("ScienceWorld: sdgym step (admissible off) vs raw scienceworld env.step",
     "test_sdgym_step_admissible_off", "test_raw_scienceworld_env_step"),
    ("ScienceWorld: sdgym step (admissible on) vs raw scienceworld env.step",
     "test_sdgym_step_admissible_on", "test_raw_scienceworld_env_step"),
    ("Search-QA: 256 batched queries vs 256 single queries",
     "test_bm25_batched_256_queries", ("test_bm25_single_queries", 256)),
    ("Search-QA: env reset+search step vs bare retriever query",
     "test_env_search_step", "test_bm25_single_queries"),
    ("WebShop: expert episode, plain vs privileged",
     "test_expert_episode_steps[plain]", "test_expert_episode_steps[privileged]"),
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
    return stats[name]["mean"] if name in stats else None


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
    stats = {b["name"].removeprefix("test_"): {**b["stats"], **b.get("extra_info", {})}
             for b in data["benchmarks"]}
    stats = {f"test_{k}": v for k, v in stats.items()}
    lines = ["# Benchmark results", "",
             f"Measured {datetime.date.today().isoformat()} on {machine()}.", "",
             "## Ratios (measured in the same run)", "", "| comparison | ratio |", "|---|---|"]
    for label, fast, slow in RATIOS:
        repeat = 1
        if isinstance(slow, tuple):
            slow, repeat = slow
        a, b = _mean(stats, fast), _mean(stats, slow)
        value = f"{(b * repeat) / a:.2f}× faster" if a and b else "not measured here"
        lines.append(f"| {label} | {value} |")
    lines += ["", "## All benchmarks (mean seconds per round)", "", "| benchmark | mean s | extra |",
              "|---|---|---|"]
    for name, entry in sorted(stats.items()):
        extra = {k: round(v, 3) for k, v in entry.items()
                 if k not in ("min", "max", "mean", "stddev", "rounds", "median", "iqr", "q1", "q3",
                              "iqr_outliers", "stddev_outliers", "outliers", "ld15iqr", "hd15iqr",
                              "ops", "total", "iterations", "data")
                 and isinstance(v, (int, float))}
        lines.append(f"| {name} | {entry['mean']:.6f} | {extra or ''} |")
    (HERE / "RESULTS.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
