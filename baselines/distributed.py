"""Data-parallel training over ``torch.distributed``: one process per rank, launched by ``torchrun``.

Every rank holds the whole model, rolls out its share of the step's groups (a group never spans
ranks, so group advantages are the single-process ones) and back-propagates its rows. The step
must equal a single-process step on the union of the rows, and the loss is a token-mean over the
whole batch, so

* the token count ``T`` in the loss weights is the global one (one ``all_reduce``): a row block
  with ``t`` tokens weighs ``t / T`` on every rank, not ``t / T_rank``;
* the per-rank gradients are then **summed** (one ``all_reduce`` over the flattened gradients),
  which gives every rank the gradient of the global token-mean loss; gradient clipping and the
  optimizer step then run identically on every rank, so the parameters stay equal.

This is DDP's gradient all-reduce done once per step after local accumulation (what
``DistributedDataParallel.no_sync`` + a final synchronised backward does). It is done explicitly
rather than through the DDP wrapper because ranks hold different numbers of rows (episodes end
after different numbers of turns) and so run different numbers of micro-batches, which DDP's
per-backward synchronisation cannot mix. Sharded parameters (FSDP) are not supported yet.

Backends: ``gloo`` on CPU (tests), ``nccl`` when the model is on CUDA. Without ``torchrun``
(no ``WORLD_SIZE`` in the environment) :func:`from_environment` gives a one-process group and
every operation is a no-op.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import torch

T = TypeVar("T")


@dataclass
class DataParallel:
    """This process's place in a data-parallel job (``world_size == 1``: a plain process)."""

    rank: int = 0
    world_size: int = 1
    owns_group: bool = False
    """Whether :func:`from_environment` created the process group (and :meth:`close` ends it)."""

    @property
    def enabled(self) -> bool:
        """More than one rank."""
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        """Rank 0: the one that logs, validates, evaluates and checkpoints."""
        return self.rank == 0

    def shard(self, items: Sequence[T]) -> list[T]:
        """This rank's contiguous block of ``items`` (sizes differ by at most one)."""
        if len(items) < self.world_size:
            raise ValueError(f"{len(items)} items cannot be shared by {self.world_size} ranks: "
                             "each rank needs at least one group (raise num_groups)")
        base, extra = divmod(len(items), self.world_size)
        start = self.rank * base + min(self.rank, extra)
        return list(items[start:start + base + (1 if self.rank < extra else 0)])

    def global_sum(self, value: float) -> float:
        """``value`` summed over ranks."""
        if not self.enabled:
            return float(value)
        tensor = torch.tensor([float(value)], dtype=torch.float64, device=self._device())
        torch.distributed.all_reduce(tensor)
        return float(tensor.item())

    def global_max(self, value: float) -> float:
        """The largest ``value`` over ranks."""
        if not self.enabled:
            return float(value)
        tensor = torch.tensor([float(value)], dtype=torch.float64, device=self._device())
        torch.distributed.all_reduce(tensor, op=torch.distributed.ReduceOp.MAX)
        return float(tensor.item())

    def broadcast_object(self, value: T) -> T:
        """Rank 0's ``value`` on every rank (picklable data)."""
        if not self.enabled:
            return value
        holder = [value]
        torch.distributed.broadcast_object_list(holder, src=0)
        return holder[0]

    def sum_metrics(self, sums: dict[str, float]) -> dict[str, float]:
        """Per-key sums over ranks (every rank must hold the same keys)."""
        if not self.enabled or not sums:
            return sums
        keys = sorted(sums)
        tensor = torch.tensor([sums[k] for k in keys], dtype=torch.float64, device=self._device())
        torch.distributed.all_reduce(tensor)
        return dict(zip(keys, tensor.tolist()))

    def sum_gradients(self, model: torch.nn.Module) -> None:
        """Replace every rank's gradients by their sum over ranks (one flattened all-reduce).

        A parameter no rank has a gradient for keeps ``grad=None`` (the optimizer skips it, as
        in a single process); one that only some ranks touched gets zeros on the others.
        """
        if not self.enabled:
            return
        params = [p for p in model.parameters() if p.requires_grad]
        has_grad = torch.tensor([p.grad is not None for p in params], dtype=torch.float32,
                                device=self._device())
        torch.distributed.all_reduce(has_grad)
        params = [p for p, count in zip(params, has_grad.tolist()) if count > 0]
        if not params:
            return
        for param in params:
            if param.grad is None:
                param.grad = torch.zeros_like(param)
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        torch.distributed.all_reduce(flat)
        offset = 0
        for param in params:
            count = param.numel()
            param.grad.copy_(flat[offset:offset + count].view_as(param.grad))
            offset += count

    def broadcast_parameters(self, model: torch.nn.Module) -> None:
        """Copy rank 0's parameters and buffers to every rank."""
        if not self.enabled:
            return
        for tensor in [*model.parameters(), *model.buffers()]:
            torch.distributed.broadcast(tensor.data, src=0)

    def barrier(self) -> None:
        """Wait for every rank."""
        if self.enabled:
            torch.distributed.barrier()

    def main_first(self, work: Callable[[], T]) -> T:
        """Run ``work`` on rank 0, then on the others (e.g. to build a shared cache once)."""
        if self.is_main:
            result = work()
            self.barrier()
            return result
        self.barrier()
        return work()

    def close(self) -> None:
        """End the process group if this object started it."""
        if self.owns_group and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()
        self.owns_group = False

    def _device(self) -> torch.device:
        if torch.distributed.get_backend() == "nccl":
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device("cpu")


def check_device(device: str, option: str = "infra.device") -> None:
    """ValueError naming ``option`` and ``device`` unless it is ``cpu`` or a CUDA device this
    machine has (checked before a run sets anything up; counts the GPUs, starts no CUDA context)."""
    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError):
        parsed = None
    if parsed is None or parsed.type not in ("cpu", "cuda"):
        raise ValueError(f"{option} {device!r}: a run trains on cpu, cuda or cuda:N")
    count = torch.cuda.device_count() if parsed.type == "cuda" else 0
    if parsed.type == "cuda" and (parsed.index or 0) >= count:
        present = f"CUDA devices cuda:0..cuda:{count - 1}" if count else "no CUDA device"
        raise ValueError(f"{option} {device!r}: this machine has {present}")


def from_environment(device: str = "cpu") -> DataParallel:
    """The data-parallel group ``torchrun`` describes (``RANK``/``WORLD_SIZE``), joined if needed.

    Uses ``gloo`` for a CPU model and ``nccl`` for CUDA. A process group that already exists
    (e.g. created by a test) is used as it is.
    """
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return DataParallel(torch.distributed.get_rank(), torch.distributed.get_world_size())
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return DataParallel()
    if not torch.distributed.is_available():
        raise RuntimeError("WORLD_SIZE > 1 but this torch build has no torch.distributed")
    backend = "nccl" if device.startswith("cuda") else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    torch.distributed.init_process_group(backend=backend)
    return DataParallel(torch.distributed.get_rank(), torch.distributed.get_world_size(),
                        owns_group=True)
