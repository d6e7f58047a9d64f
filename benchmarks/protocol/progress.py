"""Progress lines for long benchmark runs that a log can use: one line per finished cell with
done/total, elapsed time and an ETA, printed the same whether or not the output is a terminal."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from baselines.run_log import duration


class CellProgress:
    """``on_cell`` callback of :func:`benchmarks.protocol.matrix.run_matrix` that prints
    ``[ 7/42]    done  <cell>  elapsed 14m02s  ETA 1h10m`` lines.

    The ETA is the wall time per cell run so far in this process times the cells left (cells run
    side by side count as they finish, so it holds for ``--jobs N`` too); cached cells count as
    done but not as run."""

    def __init__(self, total: int, write: Callable[[str], Any] = print,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.write, self.clock = total, write, clock
        self.started = clock()
        self.done = self.ran = 0

    def __call__(self, cell: Any, status: str) -> None:
        self.done += 1
        if status != "cached":
            self.ran += 1
        elapsed = self.clock() - self.started
        left = self.total - self.done
        eta = (f"ETA {duration(elapsed / self.ran * left)}" if self.ran and left
               else "ETA -" if left else "all cells done")
        width = len(str(self.total))
        self.write(f"[{self.done:>{width}}/{self.total}] {status:>7}  {cell.key}  "
                   f"elapsed {duration(elapsed)}  {eta}")
