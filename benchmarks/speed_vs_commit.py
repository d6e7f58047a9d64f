"""A GRPO step or a generation call: this tree's code against an earlier commit's, same work.

The in-process anchor of ``test_grpo_vs_trl_bench.py`` ("previous path") is today's code with
the throughput options switched off; it keeps today's sampler and bookkeeping, so it is not
exactly the code of an earlier day. This script measures the earlier code itself: it unpacks
``--anchor-commit`` (``git archive``) into a temporary folder and times, in child processes
whose order alternates per round (:func:`benchmarks.ab_timing.alternate`), the same GRPO step
(:class:`SdgymGRPOStep` of each tree's own ``benchmarks/test_grpo_vs_trl_bench.py``: 4 prompts × 4 completions, 32 new tokens, clipped loss
with the entropy bonus, backward, clipping, AdamW) on the same model folder and the same prompt
strings, made once by this tree. Each child warms up, then times ``--steps`` steps and reports
their median; each round's ratio is anchor median / candidate median. Prints one JSON line: the
median ratio with its min-max over ``--rounds`` rounds and both sides' per-round medians.

``--work generation-distinct64`` / ``generation-grpo16x4`` time ``HFBackend.generate_from_ids``
(each tree's defaults) on the random-prompt shapes of ``test_generation_bench.py`` (64 distinct
150-250-token prompts, or 16 of them × 4), 32 new tokens, T = 1, with the shipped
``searchqa-hasty-sft`` of this tree on both sides.

Both trees must run in this Python environment. The sampled tokens differ between the two codes
(their samplers differ), so the tokens per call are reported beside the times.

Usage: ``python benchmarks/speed_vs_commit.py --anchor-commit 4530d20 [--work grpo-step]
[--rounds 5] [--steps 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORKS = ("grpo-step", "generation-distinct64", "generation-grpo16x4")
CHILD_TIMEOUT_S = 600.0
"""A child that takes longer than this (model load, warm-up and the timed steps) is an error."""

CHILD = r"""
import json, statistics, sys, time
tree, model_dir, work_file, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, tree)
# an editable install's finder would fill any module the tree lacks from the installed checkout
sys.meta_path[:] = [f for f in sys.meta_path
                    if not getattr(f, "__module__", "").startswith("__editable__")]
import torch
torch.set_num_threads(1)
torch.manual_seed(0)
try:  # what the tree's own processes do at start, where it has it
    from sdgym.process_memory import keep_freed_memory
    keep_freed_memory()
except ImportError:
    pass
from agents.backends.base import SamplingParams
from agents.backends.hf import HFBackend
from benchmarks.test_grpo_vs_trl_bench import SdgymGRPOStep
try:
    from agents.model_loading import load_model
except ImportError:  # before the model loader moved
    from agents.tiny_model import load_tiny_model as load_model
model, tokenizer = load_model(model_dir)
work = json.loads(open(work_file).read())
if work["kind"] == "grpo-step":
    step = SdgymGRPOStep(model, tokenizer, work["prompts"])
    def run():
        step()
        return step.completion_tokens[-1]
else:
    backend = HFBackend(model, tokenizer)
    params = SamplingParams(max_new_tokens=work["new_tokens"], temperature=1.0, seed=0)
    def run():
        return sum(len(g.response_ids) for g in backend.generate_from_ids(work["prompt_ids"], params))
run()  # warm-up
seconds, tokens = [], []
for _ in range(steps):
    start = time.perf_counter()
    tokens.append(run())
    seconds.append(time.perf_counter() - start)
code = sorted({m.__file__ for name, m in list(sys.modules.items())
               if name.split(".")[0] in ("agents", "baselines", "benchmarks", "sdgym")
               and getattr(m, "__file__", None)})
print(json.dumps({"median_s": statistics.median(seconds), "tokens_per_call": statistics.mean(tokens),
                  "code": code}))
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


def time_tree(tree: Path, model_dir: Path, work_file: Path, steps: int) -> dict[str, Any]:
    """One child process's median seconds per call (and tokens per call)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(model_dir),
                           str(work_file), str(steps)], capture_output=True, text=True,
                          env=env, cwd=tree, timeout=CHILD_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"the timed work of {tree} failed: {done.stderr.strip()[-800:]}")
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    foreign = foreign_modules(tree, measured["code"])
    if foreign:
        raise RuntimeError(f"the child timing {tree} imported code from elsewhere: {foreign[:3]}")
    return measured


def foreign_modules(tree: Path, files: list[str]) -> list[str]:
    """The project module files among ``files`` that do not lie inside ``tree``."""
    root = tree.resolve()
    return [path for path in files if not Path(path).resolve().is_relative_to(root)]


def work_spec(work: str) -> tuple[Path, dict[str, object]]:
    """The model folder and the identical work both sides run (made once, by this tree)."""
    from agents.model_loading import load_model
    from agents.tiny_model import build_tiny_model
    from agents.warm_starts import resolve_model
    from benchmarks.real_prompts import first_turn_prompts

    if work == "grpo-step":
        model_dir = build_tiny_model()
        _, tokenizer = load_model(model_dir)
        prompts = first_turn_prompts(tokenizer, 4, env_id="sdgym/SearchQA-v0", size="tiny")
        return model_dir, {"kind": work, "prompts": prompts}
    rng = random.Random(0)  # the prompts of test_generation_bench.py's shapes
    distinct = [[rng.randrange(5, 1000) for _ in range(rng.randint(150, 250))] for _ in range(64)]
    prompt_ids = distinct if work == "generation-distinct64" else [
        p for p in distinct[:16] for _ in range(4)]
    return Path(resolve_model("searchqa-hasty-sft")), {
        "kind": work, "prompt_ids": prompt_ids, "new_tokens": 32}


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--anchor-commit", required=True, help="the earlier commit to time")
    parser.add_argument("--work", choices=WORKS, default="grpo-step")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5, help="timed calls per child")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks.ab_timing import alternate
    from benchmarks.run_all import machine

    model_dir, work = work_spec(args.work)
    with tempfile.TemporaryDirectory(prefix="sdgym-vs-commit-") as scratch:
        folder = Path(scratch)
        work_file = folder / "work.json"
        work_file.write_text(json.dumps(work))
        anchor = unpack_commit(args.anchor_commit, folder)
        tokens: dict[str, list[float]] = {"anchor": [], "candidate": []}

        def side(name: str, tree: Path) -> Callable[[], float]:
            def run() -> float:  # one child: warmed up inside, median seconds of its calls
                measured = time_tree(tree, model_dir, work_file, args.steps)
                tokens[name].append(measured["tokens_per_call"])
                return measured["median_s"]
            return run

        timed = alternate(side("candidate", ROOT), side("anchor", anchor), rounds=args.rounds,
                          warmup=0)
    per_token = [(tc / c) / (ta / a) for a, c, ta, tc in
                 zip(timed.anchor, timed.candidate, tokens["anchor"], tokens["candidate"])]
    result = {"work": args.work, "anchor_commit": args.anchor_commit, "machine": machine(),
              "calls_per_child": args.steps,
              **timed.summary("speedup"),
              "tokens_per_s_ratio_median": round(statistics.median(per_token), 3),
              "median_s": {"anchor": [round(s, 4) for s in timed.anchor],
                           "candidate": [round(s, 4) for s in timed.candidate]},
              "tokens_per_call": {name: round(statistics.mean(v), 1) for name, v in tokens.items()},
              "candidate_tokens_per_s": round(
                  statistics.mean(tokens["candidate"]) / statistics.median(timed.candidate))}
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
