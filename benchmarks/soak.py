"""Soak: step each env for thousands of steps and check that memory, disk and file handles stay
flat; writes its table into ``benchmarks/RESULTS.md`` (between the ``soak`` markers).

Usage: ``python benchmarks/soak.py [--steps 5000] [--warmup 1000] [--env ID ...] [--vector N]``.

Each env is stepped by a mixed policy (the expert's next action half the time, else a random
admissible action or a malformed one), and a fresh env is made for every episode and closed
after it, as a benchmark worker does across its cells: that is where engines leak (a planner
library or a JVM per env). With ``--vector N`` the env runs instead as a synchronous vector env
of N sub-envs that live for the whole soak and reset themselves onto random tasks (Gymnasium's
autoreset), as a training rollout does; ``--steps`` then counts sub-env steps. Every ``--every``
steps it records this process's resident memory,
the memory of its children (ScienceWorld's JVM), the disk held by deleted-but-mapped files, and
open file descriptors. This process's memory passes when its growth from the end of the warm-up
to the end is at most 5%; disk held may grow by at most one file's worth (a pool holds one copy
per live env), open descriptors by at most 2. The children's memory is shown, not judged: each
sample sees the JVM of a different env.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import sys
import time
from pathlib import Path

import gymnasium as gym
import psutil

import sdgym  # noqa: F401  (registers the env ids)
from sdgym.registration import ENVIRONMENTS

HERE = Path(__file__).parent
MARK_START, MARK_END = "<!-- soak -->", "<!-- /soak -->"
GROWTH_LIMIT = 0.05


def deleted_mapped_bytes() -> int:
    """Disk held by files this process maps after they were deleted: each such file's whole
    size (``/proc/self/map_files`` reaches the deleted inode), else its largest mapping."""
    sizes: dict[str, int] = {}
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith("(deleted)"):
                span = line.split()[0]
                start, end = (int(x, 16) for x in span.split("-"))
                path = line.split(None, 5)[5].rsplit(" (deleted)", 1)[0]
                try:
                    size = os.stat(f"/proc/self/map_files/{span}").st_size
                except OSError:
                    size = end - start
                sizes[path] = max(sizes.get(path, 0), size)
    return sum(sizes.values())


def sample() -> dict[str, float]:
    process = psutil.Process()
    children = process.children(recursive=True)
    return {"rss_mb": process.memory_info().rss / 2**20,
            "children_rss_mb": sum(c.memory_info().rss for c in children) / 2**20,
            "deleted_mapped_mb": deleted_mapped_bytes() / 2**20,
            "open_fds": float(process.num_fds())}


def choose(info: dict, rng: random.Random) -> str:
    expert = (info.get("privileged") or {}).get("expert_action")
    admissible = info.get("admissible_actions") or []
    roll = rng.random()
    if expert and roll < 0.5:
        return expert
    if admissible and roll < 0.9:
        return rng.choice(admissible)
    return rng.choice(["", "look around", "<search>anything</search>", "fly to the moon"])


def soak(env_id: str, steps: int, every: int, kwargs: dict, verbose: bool = False
         ) -> list[dict[str, float]]:
    rng = random.Random(0)
    samples, done_steps, episode = [], 0, 0
    while done_steps < steps:
        env = gym.make(env_id, **kwargs)
        try:
            _, info = env.reset(seed=episode, options={"split": "train"})
            finished = False
            while not finished and done_steps < steps:
                _, _, terminated, truncated, info = env.step(choose(info, rng))
                finished = terminated or truncated
                done_steps += 1
                if done_steps % every == 0:
                    samples.append({"step": done_steps, **sample()})
                    if verbose:  # progress of a long soak, and its curve
                        print(json.dumps({"env": env_id, **samples[-1]}), flush=True)
        finally:
            env.close()
        episode += 1
    return samples


def row(infos: dict, index: int) -> dict:
    """Sub-env ``index``'s info from a vector env's batched infos (masks dropped)."""
    return {key: row(value, index) if isinstance(value, dict) else value[index]
            for key, value in infos.items() if not key.startswith("_")}


def soak_vector(env_id: str, steps: int, every: int, kwargs: dict, num_envs: int,
                verbose: bool = False) -> list[dict[str, float]]:
    """:func:`soak` on one synchronous vector env of ``num_envs`` sub-envs that live throughout."""
    rng = random.Random(0)
    samples, done_steps = [], 0
    vector = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", **kwargs)
    try:
        _, infos = vector.reset(seed=list(range(num_envs)), options={"split": "train"})
        while done_steps < steps:
            actions = tuple(choose(row(infos, i), rng) for i in range(num_envs))
            _, _, _, _, infos = vector.step(actions)
            for _ in range(num_envs):
                done_steps += 1
                if done_steps % every == 0:
                    samples.append({"step": done_steps, **sample()})
                    if verbose:
                        print(json.dumps({"env": env_id, **samples[-1]}), flush=True)
    finally:
        vector.close()
    return samples


def growth(samples: list[dict[str, float]], warmup: int, key: str) -> float:
    after = [s for s in samples if s["step"] >= warmup]
    first, last = after[0][key], after[-1][key]
    return (last - first) / first if first else (0.0 if last == first else float("inf"))


def table(results: dict[str, list[dict[str, float]]], steps: int, warmup: int, when: str,
          vector: int = 0) -> str:
    how = (f"a vector env of {vector} sub-envs living throughout (autoreset onto random tasks)"
           if vector else "a fresh env per episode")
    lines = [f"## Soak: env steps without leaks ({when})", "",
             f"`python benchmarks/soak.py`: each env stepped {steps} "
             f"times by a mixed policy, {how}; growth from the end of the "
             f"{warmup}-step warm-up to the end (target ≤ {GROWTH_LIMIT:.0%}; disk held by "
             "deleted-but-mapped files: at most one 34 MB planner copy).", "",
             "| env | RSS MB (after warm-up → end) | growth | children RSS MB | deleted-mapped MB | "
             "open fds | verdict |", "|---|---|---|---|---|---|---|"]
    for env_id, samples in results.items():
        after = [s for s in samples if s["step"] >= warmup]
        rss = growth(samples, warmup, "rss_mb")
        held = after[-1]["deleted_mapped_mb"] - after[0]["deleted_mapped_mb"]
        fds = after[-1]["open_fds"] - after[0]["open_fds"]
        kids = (after[0]["children_rss_mb"], after[-1]["children_rss_mb"])
        # children (a JVM) are shown, not judged: with a fresh env per episode each sample sees
        # a different JVM, so their difference is not a growth
        ok = rss <= GROWTH_LIMIT and held <= 34 and fds <= 2
        lines.append(f"| {env_id} | {after[0]['rss_mb']:.0f} → {after[-1]['rss_mb']:.0f} | "
                     f"{rss:+.1%} | {kids[0]:.0f} → {kids[1]:.0f} | "
                     f"{after[0]['deleted_mapped_mb']:.0f} → {after[-1]['deleted_mapped_mb']:.0f} | "
                     f"{after[0]['open_fds']:.0f} → {after[-1]['open_fds']:.0f} | "
                     f"{'flat' if ok else '**grows**'} |")
    return "\n".join(lines) + "\n"


def write_results(section: str) -> None:
    path = HERE / "RESULTS.md"
    text = path.read_text() if path.exists() else ""
    block = f"{MARK_START}\n{section}{MARK_END}"
    if MARK_START in text:
        text = re.sub(re.escape(MARK_START) + r".*?" + re.escape(MARK_END), lambda _: block, text,
                      flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3000, help="steps per env")
    parser.add_argument("--warmup", type=int, default=1000, help="steps before growth is measured")
    parser.add_argument("--every", type=int, default=500, help="steps between samples")
    parser.add_argument("--env", action="append", default=None, help="env ids (default: all installed)")
    parser.add_argument("--verbose", action="store_true", help="print every sample as a JSON line")
    parser.add_argument("--vector", type=int, default=0, metavar="N",
                        help="step a sync vector env of N long-lived sub-envs instead of a fresh "
                        "env per episode (--steps counts sub-env steps)")
    args = parser.parse_args(argv)
    entries = [e for e in ENVIRONMENTS if e.installed() and (not args.env or e.env_id in args.env)]
    small = {"sdgym/ALFWorld-v0": {"size": "small"}, "sdgym/SearchQA-v0": {"size": "small"},
             "sdgym/WebShop-v0": {"size": "small"},
             "sdgym/ScienceWorld-v0": {"simplifications": "easy"}}
    results = {}
    for entry in entries:
        started = time.monotonic()
        kwargs = small.get(entry.env_id, {})
        if args.vector:
            results[entry.env_id] = soak_vector(entry.env_id, args.steps, args.every, kwargs,
                                                args.vector, args.verbose)
        else:
            results[entry.env_id] = soak(entry.env_id, args.steps, args.every, kwargs,
                                         args.verbose)
        print(json.dumps({"env": entry.env_id, "seconds": round(time.monotonic() - started, 1),
                          "last": results[entry.env_id][-1]}), flush=True)
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = table(results, args.steps, args.warmup, when, args.vector)
    print(section)
    write_results(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
