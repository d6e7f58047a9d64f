"""Pre-generate ALFWorld games into the cache (games are otherwise generated on first use).

Usage::

    python -m sdgym.envs.alfworld.generate --split train --count 200 [--start 0]
    python -m sdgym.envs.alfworld.generate --split val_unseen --count 134 --out DIR
    python -m sdgym.envs.alfworld.generate --split test --size small

The output is byte-identical on every run and machine (tests hash it); a draw the room can't
host, or whose planning exceeds its memory cap, is redrawn from the next fixed sub-seed.

``--out`` also copies each game folder to ``DIR/<split>/<index>/`` (upstream layout:
``game.tw-pddl`` + ``traj_data.json``), loadable with ``gym.make(..., data_path=DIR/<split>)``.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from sdgym.cache import MANIFEST
from sdgym.envs.alfworld.generator import game_folder
from sdgym.envs.alfworld.splits import ROOM_SIZES, SPLITS, canonical_split


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="train", help=f"one of {sorted(SPLITS)}, val, test")
    parser.add_argument("--count", type=int, default=None, help="number of games (default: all)")
    parser.add_argument("--start", type=int, default=0, help="first task index")
    parser.add_argument("--size", default="full", choices=ROOM_SIZES, help="room size")
    parser.add_argument("--out", type=Path, default=None, help="also copy games to this folder")
    args = parser.parse_args(argv)
    split = canonical_split(args.split)
    stop = (
        SPLITS[split].size
        if args.count is None
        else min(SPLITS[split].size, args.start + args.count)
    )
    began = time.perf_counter()
    for index in range(args.start, stop):
        folder = game_folder(split, index, args.size)
        if args.out is not None:
            shutil.copytree(folder, args.out / split / f"{index:05d}", dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns(MANIFEST))  # upstream's files only
        print(f"{split} {index}: {folder}", flush=True)
    elapsed = time.perf_counter() - began
    print(f"{stop - args.start} games in {elapsed:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
