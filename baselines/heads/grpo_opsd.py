"""GRPO+OPSD: GRPO plus an ungated (constant ½) self-distillation term.

Formula (METHODS.md)::

    L = L0 + c · mean_t ½·(q_t − s_t)      (teacher detached; token-mean over batch.mask)

The reference realises this as the SDAR loss with ``gate_beta=0`` (σ(0) = ½), so the
diagnostics mirror SDAR's. Defaults: c = 0.01. Context: ``skills``. Teacher weights:
``current`` (reference recipe; see :mod:`baselines.heads.sdar`).
Source: ZJU-REAL/SDAR ``examples/grpo_opsd_trainer`` (+ ``sdar_utils.py``). Not inferred.
"""

from __future__ import annotations

from typing import Any

import torch

from baselines.heads import register_head
from baselines.heads.base import HeadBatch, HeadOutput, TeacherHead, gated_distillation_term


@register_head
class GRPOOPSDHead(TeacherHead):
    """Additive distillation with a constant gate of one half."""

    name = "grpo_opsd"
    needs_teacher = True

    def __init__(
        self,
        coef: float = 0.01,
        teacher_weights: str = "current",
        context: str = "skills",
        **kwargs: Any,
    ) -> None:
        super().__init__(teacher_weights=teacher_weights, context=context, **kwargs)
        self.coef = coef

    def apply(self, batch: HeadBatch) -> HeadOutput:
        gate = torch.full_like(batch.student_logprobs, 0.5)
        term, metrics = gated_distillation_term(batch, gate, self.name)
        return HeadOutput(aux_loss=self.coef * term, metrics=metrics)
