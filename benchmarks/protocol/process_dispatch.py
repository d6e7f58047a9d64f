"""Benchmark cells in worker processes on this machine, ``jobs`` cells at a time.

The workers start once (``spawn``) and run cell after cell, so a cell pays neither for importing
torch and transformers nor for rebuilding what the envs memoise per process (generated
catalogues, search indexes). Each worker runs torch on ``OMP_NUM_THREADS`` threads (1 unless the
caller set it): on a 2-core machine two single-threaded cells use both cores, where one cell at a
time leaves one idle.

Costs stay per process: a cell's CPU seconds (:mod:`baselines.cost`) are those of its worker while
it runs only that cell, so cells run side by side keep valid cost ratios. The driver writes
``result.json`` / ``failure.json`` exactly as the one-after-another path does. A worker that dies
(killed, out of memory) makes the cells in flight suspects, each run again alone to find the
one that kills its worker (:func:`run_cells_in_processes`); a re-run resumes any that failed. Workers are
tied to the driver (:mod:`sdgym.process_lifetime`): when the driver dies, even by ``kill -9``,
they and what they started end within seconds instead of running on as orphans.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from sdgym.process_lifetime import ParentTie, parent_tie, tie_to_parent


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _start_worker(tie: ParentTie) -> None:
    from sdgym.process_memory import keep_freed_memory

    tie_to_parent(tie)
    keep_freed_memory()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    try:  # a cell loads models many times: no per-load "Loading weights" bars in the run's log
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    except ImportError:
        pass


BROKEN_POOL_RETRIES = 1
"""Times a cell is run again, alone, after its worker died under it while it ran alone (a
worker killed, e.g. by the out-of-memory killer) before it is recorded as failed."""


def run_cells_in_processes(
    cells: Sequence[Any],
    attempt: Callable[..., Any],
    args: tuple,
    jobs: int,
) -> Iterator[tuple[Any, Any]]:
    """Run ``attempt(cell, *args)`` for every cell on ``jobs`` reused worker processes; yield
    ``(cell, (record, errors))`` as each finishes. ``attempt`` and ``args`` must be picklable
    (module-level functions).

    At most ``jobs`` cells are in flight. A worker that dies breaks its pool, and every cell in
    flight then becomes a suspect: the suspects run again one at a time, each alone in a fresh
    pool, so the cell that kills its worker is found without blaming its neighbours. A suspect
    whose worker dies while it runs alone is run alone :data:`BROKEN_POOL_RETRIES` more time(s),
    then recorded as failed; the other cells go on ``jobs`` at a time."""
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    queue, suspects = deque(cells), deque()
    breaks_alone: Counter[str] = Counter()
    while queue or suspects:
        alone = bool(suspects)
        source, width = (suspects, 1) if alone else (queue, jobs)
        pool = ProcessPoolExecutor(max_workers=width,
                                   mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker, initargs=(parent_tie(),))
        try:
            in_flight: dict[Future, Any] = {}
            broken = False
            while in_flight or (source and not broken):
                while source and not broken and len(in_flight) < width:
                    cell = source.popleft()
                    in_flight[pool.submit(attempt, cell, *args)] = cell
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    cell = in_flight.pop(future)
                    try:
                        outcome = future.result()
                    except BrokenProcessPool as error:
                        broken = True
                        if not alone:
                            suspects.append(cell)  # it or a neighbour killed the worker
                            continue
                        breaks_alone[cell.key] += 1
                        if breaks_alone[cell.key] <= BROKEN_POOL_RETRIES:
                            suspects.appendleft(cell)
                            continue
                        outcome = (None, [f"worker process for {cell.key} failed: {error!r}"])
                    except Exception as error:  # never dropped: recorded as failed
                        outcome = (None, [f"worker process for {cell.key} failed: {error!r}"])
                    yield cell, outcome
        finally:  # on an interrupt, cancel what has not started and stop the workers
            pool.shutdown(wait=True, cancel_futures=True)
