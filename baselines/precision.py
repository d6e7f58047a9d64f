"""Mixed precision for training: float32 master weights and optimizer states, forwards in the
compute dtype (``TrainConfig.dtype``).

This is the standard recipe (PyTorch AMP; FSDP's ``MixedPrecisionPolicy``): the trained policy's
parameters, gradients and AdamW moments stay float32, so small updates (lr 1e-6) are not rounded
away; its matmuls run in bfloat16 under :meth:`Precision.autocast`. Under FSDP the sharded
module casts its gathered parameters itself (``param_dtype``) and :meth:`autocast` does nothing.
Log-probs, the softmax of the losses and all reductions are computed in float32 from the logits.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from agents.model_loading import resolve_dtype


@dataclass(frozen=True)
class Precision:
    """The compute dtype of a run on ``device`` (float32: autocast off)."""

    compute: torch.dtype = torch.float32
    device: str = "cpu"
    module_casts: bool = False
    """The model casts its own parameters (FSDP's mixed-precision policy): no autocast."""

    @classmethod
    def for_run(cls, dtype: str, device: str, sharding: str = "replicated") -> Precision:
        """The precision of a run with ``TrainConfig`` fields ``dtype``, ``device``, ``sharding``."""
        return cls(resolve_dtype(dtype, device), device, module_casts=sharding == "fsdp")

    @property
    def mixed(self) -> bool:
        """Whether forwards run in a lower precision than the float32 master weights."""
        return self.compute != torch.float32

    @contextlib.contextmanager
    def autocast(self) -> Iterator[None]:
        """Forwards inside run in the compute dtype (nothing changes for float32 or FSDP)."""
        if not self.mixed or self.module_casts:
            yield
            return
        with torch.autocast(device_type=torch.device(self.device).type, dtype=self.compute):
            yield
