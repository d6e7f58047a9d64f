"""Benchmark cells as Ray tasks: the matrix's pending cells run concurrently on a Ray cluster.

Each task runs one cell with its retries (the matrix passes its ``attempt_cell``) and
returns the record or the errors; the driver writes ``result.json`` / ``failure.json`` exactly
as the local path does, so resuming and reporting are unchanged. A task whose worker process dies
is retried by Ray (``retries`` times), then recorded as a failed cell.

Training cells write their run folders (``<out>/runs/<cell>``) from the worker, so on a multi-node
cluster ``--out`` must be a shared filesystem path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from agents.ray_runtime import acquire_ray, import_ray, release_ray


@dataclass(frozen=True)
class RayDispatch:
    """How cells are placed on Ray.

    Attributes:
        address: Cluster to join; ``None`` starts a local Ray instance.
        cpus_per_cell: CPUs a cell task holds (bounds how many cells run at once).
        gpus_per_cell: GPUs a cell task holds (e.g. ``1`` for model training on GPU nodes).
    """

    address: str | None = None
    cpus_per_cell: float = 1.0
    gpus_per_cell: float = 0.0


def run_cells_on_ray(
    cells: Sequence[Any],
    attempt: Callable[..., Any],
    args: tuple[Any, ...],
    dispatch: RayDispatch,
    retries: int = 0,
) -> Iterator[tuple[Any, Any]]:
    """Submit ``attempt(cell, *args)`` for every cell as a Ray task (Ray retries a dead worker
    ``retries`` times); yield ``(cell, (record, errors))`` as each finishes."""
    acquire_ray(dispatch.address)
    ray = import_ray()
    try:
        task = ray.remote(attempt).options(
            num_cpus=dispatch.cpus_per_cell, num_gpus=dispatch.gpus_per_cell,
            max_retries=retries)
        pending = {task.remote(cell, *args): cell for cell in cells}
        while pending:
            finished, _ = ray.wait(list(pending), num_returns=1)
            cell = pending.pop(finished[0])
            try:
                outcome = ray.get(finished[0])
            except ray.exceptions.RayError as error:  # the worker died on every try
                outcome = (None, [f"Ray task for {cell.key} failed: {error!r}"])
            yield cell, outcome
    finally:
        release_ray()
