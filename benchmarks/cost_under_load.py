"""Is the benchmark's cost measure load-robust? The same GRPO cell, alone vs on a loaded machine.

Runs ``sdgym train --preset cpu-mini --method grpo`` for a few steps ``rounds`` times alone and
``rounds`` times while ``hogs`` busy-loop processes compete for the cores, alternating (alone,
loaded, alone, loaded, …), and prints for each cost measure the loaded/alone ratio (median and
min–max over rounds): training wall seconds, training process CPU seconds, and the model-FLOP
estimate from exact token counts (the measure the benchmark report compares on CPU by default). The hogs are killed when the script ends, also on error.

Usage: ``python benchmarks/cost_under_load.py [--rounds 3] [--hogs 2] [--steps 4]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HOG = "while True: pass"


def train_once(out: Path, steps: int) -> dict:
    command = [sys.executable, "-m", "sdgym.cli", "train", "--preset", "cpu-mini", "--method", "grpo", "--steps", str(steps),
               "--no-eval", "--out", str(out), "--set", "val_episodes=4",
               "--set", f"evaluation.val_every={steps}"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(command, check=True, capture_output=True, env=env, timeout=1200)
    return json.loads((out / "SearchQA-v0" / "grpo" / "seed0" / "summary.json").read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hogs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    ratios: dict[str, list[float]] = {"train_seconds": [], "train_cpu_seconds": [],
                                      "train_flops_estimate": []}
    with tempfile.TemporaryDirectory() as tmp:
        train_once(Path(tmp) / "warm", args.steps)  # warm caches, imports and the page cache
        for index in range(args.rounds):
            alone = train_once(Path(tmp) / f"alone{index}", args.steps)
            hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(args.hogs)]
            try:
                loaded = train_once(Path(tmp) / f"loaded{index}", args.steps)
            finally:
                for hog in hogs:
                    hog.kill()
                    hog.wait()
            for key in ratios:
                ratios[key].append(loaded[key] / alone[key])
            print(f"round {index}: wall {alone['train_seconds']:.1f}s -> "
                  f"{loaded['train_seconds']:.1f}s, CPU {alone['train_cpu_seconds']:.1f}s -> "
                  f"{loaded['train_cpu_seconds']:.1f}s", flush=True)
    for key, values in ratios.items():
        print(f"{key}: loaded/alone median {statistics.median(values):.3f} "
              f"(min {min(values):.3f}, max {max(values):.3f}) over {len(values)} rounds, "
              f"{args.hogs} busy-loop processes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
