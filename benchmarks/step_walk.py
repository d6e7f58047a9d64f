"""Where one GRPO step's code lives: the project files ``Trainer.update`` enters, in call order.

A newcomer reads a step the way it runs. This traces one ``Trainer.update`` of a ``cpu-smoke``
run (one rollout, then the update with the chosen head) and reports the project source files its
calls enter: each file once, in the order first entered, and how often the walk comes back into
a file it already left (a re-entry: the reader jumps back). Calls into libraries (torch,
transformers) are not followed; a project function they call back into is.

    python -m benchmarks.step_walk --method opsd --depth 3

prints the walk, the file count and the re-entries per file. ``--depth`` says how deep to follow:
the step itself is depth 1, what it calls depth 2, and so on.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agents", "baselines", "sdgym")
"""Project packages whose files count (``benchmarks`` holds no step code)."""


@dataclass(frozen=True)
class Walk:
    """The project files a call path entered, in order (consecutive repeats merged)."""

    path: tuple[str, ...]

    @property
    def files(self) -> list[str]:
        """Each file once, in the order it was first entered."""
        return list(dict.fromkeys(self.path))

    @property
    def reentries(self) -> Counter[str]:
        """How many times the walk came back into each file after leaving it."""
        seen: set[str] = set()
        counts: Counter[str] = Counter()
        for name in self.path:
            if name in seen:
                counts[name] += 1
            seen.add(name)
        return counts


def project_file(filename: str) -> str | None:
    """``filename`` relative to the repository when it is a project module, else None."""
    try:
        relative = Path(filename).resolve().relative_to(ROOT)
    except ValueError:
        return None
    return relative.as_posix() if relative.parts[0] in PACKAGES else None


def trace_files(call, *args, depth: int = 3, **kwargs) -> tuple[Walk, object]:
    """Run ``call(*args, **kwargs)`` and record the project files its calls enter, down to
    ``depth`` project functions deep (``call`` itself is depth 1; library frames in between do
    not count), which is how far a reader follows a step: the step, what it calls, and what
    those call; below that are leaf helpers read once."""
    path: list[str] = []
    names: dict[str, str | None] = {}
    stack = [0]  # project functions now running

    def profile(frame, event, _arg) -> None:
        if event not in ("call", "return"):
            return
        filename = frame.f_code.co_filename
        if filename not in names:
            names[filename] = project_file(filename)
        name = names[filename]
        if name is None:
            return
        if event == "return":
            stack[0] -= 1
            return
        stack[0] += 1
        if stack[0] <= depth and (not path or path[-1] != name):
            path.append(name)

    sys.setprofile(profile)
    try:
        result = call(*args, **kwargs)
    finally:
        sys.setprofile(None)
    return Walk(tuple(path)), result


def step_walk(method: str, out_dir: str, depth: int = 3) -> Walk:
    """The walk of one ``Trainer.update`` of a 1-step ``cpu-smoke`` run with ``method``."""
    from baselines.config import load_preset
    from baselines.trainer import Trainer

    config = load_preset("cpu-smoke", method=method, out_dir=out_dir, steps=1)
    trainer = Trainer(config)
    try:
        trainer.model.eval()
        with trainer.generating():
            batch = trainer.engine.collect(trainer._group_seeds(0),
                                           trainer._sampling(0, config.rollout.temperature),
                                           config.train_split)
        walk, _ = trace_files(trainer.update, batch, 0, depth=depth)
    finally:
        trainer.close()
    return walk


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", default="opsd", help="head of the step (default opsd)")
    parser.add_argument("--depth", type=int, default=3,
                        help="project functions deep to follow (default 3: the step, what it "
                             "calls, and what those call)")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory() as out_dir:
        walk = step_walk(args.method, out_dir, args.depth)
    print(" -> ".join(walk.path))
    reentries = walk.reentries
    print(f"\n{len(walk.files)} files, {sum(reentries.values())} re-entries")
    for name in walk.files:
        print(f"  {name}" + (f"  (re-entered {reentries[name]}x)" if reentries[name] else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
