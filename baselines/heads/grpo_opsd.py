"""GRPO+OPSD: GRPO plus an ungated (constant ½) self-distillation term.

Formula (METHODS.md)::

    L = L0 + c · mean_t ½·(q_t − s_t)      (teacher detached; token-mean over teacher rows)

The reference realises this as the SDAR loss with ``gate_beta=0`` (σ(0) = ½). Note: **its
gradient does not depend on the teacher** — ``∂L/∂s_t = −c/(2N)`` for every sampled token, so
the term only adds a constant push up on the sampled tokens (a likelihood bonus); ``q_t`` shows
up in the loss value and the diagnostics alone. The same holds for the reference code.

Defaults: c = 0.01. Context: ``skills``. Teacher weights: ``current`` (reference recipe; see
:mod:`baselines.heads.sdar`).
Source: ZJU-REAL/SDAR ``examples/grpo_opsd_trainer`` (+ ``sdar_utils.py``). Not inferred.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from baselines.heads import register_head
from baselines.heads.base import Head, HeadBatch, HeadOutput, gated_distillation_term


@register_head
@dataclass(kw_only=True)
class GRPOOPSDHead(Head):
    """Additive distillation with a constant gate of one half."""

    name = "grpo_opsd"
    row = 3
    source = "ZJU-REAL/SDAR `examples/grpo_opsd_trainer`"
    needs_teacher = True
    reference: ClassVar[dict[str, Any]] = {
        "coef": 0.01, "teacher_weights": "current", "grpo.lr": 1e-6, "grpo.kl_coef": 0.01,
        "grpo.entropy_coef": 0.001}

    coef: float = 0.01
    """``c``: weight of the constant-gate distillation term."""
    teacher_weights: str = "current"
    """The reference recipe's."""
    context: str = "skills"
    """Per-task-type guidance."""

    def apply(self, batch: HeadBatch) -> HeadOutput:
        gate = torch.full_like(batch.student_logprobs, 0.5)
        term, metrics = gated_distillation_term(batch, gate, self.name)
        return HeadOutput(aux_loss=self.coef * term, metrics=metrics)
