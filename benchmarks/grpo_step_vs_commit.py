"""Seconds per GRPO step: this tree's code against an earlier commit's, on identical work.

The in-process anchor of ``test_grpo_vs_trl_bench.py`` ("previous path") is today's code with
the throughput options switched off; it keeps today's sampler and bookkeeping, so it is not
exactly the code of an earlier day. This script measures the earlier code itself: it unpacks
``--anchor-commit`` (``git archive``) into a temporary folder and times, in alternating child
processes (A/B, B/A, ...), the same GRPO step (:class:`SdgymGRPOStep` of each tree's own
``benchmarks/test_grpo_vs_trl_bench.py``: 4 prompts × 4 completions, 32 new tokens, clipped loss
with the entropy bonus, backward, clipping, AdamW) on the same model folder and the same prompt
strings, made once by this tree. Each child warms up, then times ``--steps`` steps and reports
their median; each round's ratio is anchor median / candidate median. Prints one JSON line: the
median ratio with its min-max over ``--rounds`` rounds and both sides' per-round medians.

Both trees must run in this Python environment. The sampled tokens differ between the two codes
(their samplers differ), so the completion tokens per step are reported beside the times.

Usage: ``python benchmarks/grpo_step_vs_commit.py --anchor-commit 4530d20 [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD_TIMEOUT_S = 600.0
"""A child that takes longer than this (model load, warm-up and the timed steps) is an error."""

CHILD = r"""
import json, statistics, sys, time
tree, model_dir, prompts_file, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, tree)
import torch
torch.set_num_threads(1)
torch.manual_seed(0)
import agents, baselines
from benchmarks.test_grpo_vs_trl_bench import SdgymGRPOStep
try:
    from agents.model_loading import load_model
except ImportError:  # before the model loader moved
    from agents.tiny_model import load_tiny_model as load_model
model, tokenizer = load_model(model_dir)
step = SdgymGRPOStep(model, tokenizer, json.loads(open(prompts_file).read()))
step()  # warm-up
seconds = []
for _ in range(steps):
    start = time.perf_counter()
    step()
    seconds.append(time.perf_counter() - start)
print(json.dumps({"median_s": statistics.median(seconds),
                  "code": [agents.__file__, baselines.__file__],
                  "tokens_per_step": statistics.mean(step.completion_tokens[1:])}))
"""


def unpack_commit(commit: str, into: Path) -> Path:
    """The tree of ``commit`` of this repository, unpacked under ``into``."""
    archive = into / "anchor.tar"
    with open(archive, "wb") as handle:
        subprocess.run(["git", "-C", str(ROOT), "archive", commit], stdout=handle, check=True,
                       timeout=120)
    tree = into / "anchor"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


def time_tree(tree: Path, model_dir: Path, prompts_file: Path, steps: int) -> dict[str, float]:
    """One child process's median seconds per step (and completion tokens per step)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(model_dir),
                           str(prompts_file), str(steps)], capture_output=True, text=True,
                          env=env, cwd=tree, timeout=CHILD_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"the GRPO step of {tree} failed: {done.stderr.strip()[-800:]}")
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    if not all(Path(path).resolve().is_relative_to(tree.resolve()) for path in measured["code"]):
        raise RuntimeError(f"the child imported {measured['code']}, not the code of {tree}")
    return measured


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anchor-commit", required=True, help="the earlier commit to time")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5, help="timed steps per child")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from agents.model_loading import load_model
    from agents.tiny_model import build_tiny_model
    from benchmarks.real_prompts import first_turn_prompts

    model_dir = build_tiny_model()
    _, tokenizer = load_model(model_dir)
    prompts = first_turn_prompts(tokenizer, 4, env_id="sdgym/SearchQA-v0", size="tiny")
    with tempfile.TemporaryDirectory(prefix="sdgym-grpo-vs-commit-") as scratch:
        folder = Path(scratch)
        prompts_file = folder / "prompts.json"
        prompts_file.write_text(json.dumps(prompts))
        anchor = unpack_commit(args.anchor_commit, folder)
        anchor_s, candidate_s, tokens = [], [], {"anchor": [], "candidate": []}
        for round_index in range(args.rounds):
            order = [("anchor", anchor), ("candidate", ROOT)]
            for side, tree in order if round_index % 2 == 0 else order[::-1]:
                measured = time_tree(tree, model_dir, prompts_file, args.steps)
                (anchor_s if side == "anchor" else candidate_s).append(measured["median_s"])
                tokens[side].append(measured["tokens_per_step"])
    ratios = [a / c for a, c in zip(anchor_s, candidate_s)]
    result = {"anchor_commit": args.anchor_commit, "rounds": args.rounds, "steps": args.steps,
              "speedup_median": round(statistics.median(ratios), 3),
              "speedup_min": round(min(ratios), 3), "speedup_max": round(max(ratios), 3),
              "anchor_median_s": [round(s, 4) for s in anchor_s],
              "candidate_median_s": [round(s, 4) for s in candidate_s],
              "tokens_per_step": {side: round(statistics.mean(v), 1) for side, v in tokens.items()}}
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
