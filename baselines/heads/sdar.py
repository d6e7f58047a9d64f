"""SDAR: GRPO plus a confidence-gated self-distillation term.

Formula (METHODS.md)::

    δ_t = stopgrad(q_t − s_t)        g_t = stopgrad σ(β·δ_t)
    L   = L0 + c · mean_t g_t·(q_t − s_t)      (token-mean over the teacher rows' tokens)

The gradient w.r.t. ``s_t`` is ``−c·g_t/N``: the student's log-prob of each sampled token is
raised, strongly where the teacher assigns it more mass than the student (``δ_t > 0``).

Defaults: ``coef`` c = 0.01, ``beta`` β = 5 (the reference's ``gate_beta``).
Context: ``skills`` (per-task-type guidance; ``privileged`` expert info is the alternative).
Teacher weights: ``current`` — the reference scores the teacher prompt with the actor's weights
at rollout time, without grad; sdgym scores it once per batch before the update, like the
reference (``frozen``/``ema`` are switches).
Source: arXiv 2605.15155; ref ZJU-REAL/SDAR ``verl/trainer/ppo/sdar_utils.py`` (read, not
copied). Not inferred.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from baselines.heads import register_head
from baselines.heads.base import (
    Head,
    HeadBatch,
    HeadOutput,
    gated_distillation_term,
    teacher_gap,
)


@register_head
@dataclass(kw_only=True)
class SDARHead(Head):
    """Additive, sigmoid-gated distillation toward the privileged-context teacher."""

    name = "sdar"
    row = 4
    source = "ZJU-REAL/SDAR `sdar_utils.py` (arXiv 2605.15155)"
    needs_teacher = True
    reference: ClassVar[dict[str, Any]] = {
        "coef": 0.01, "beta": 5.0, "teacher_weights": "current", "grpo.lr": 1e-6,
        "grpo.kl_coef": 0.01, "grpo.entropy_coef": 0.001}

    coef: float = 0.01
    """``c``: weight of the gated distillation term."""
    beta: float = 5.0
    """``β``: sharpness of the gate ``σ(β·δ_t)`` (the reference's ``gate_beta``)."""
    teacher_weights: str = "current"
    """The reference scores the teacher prompt with the actor's weights, without grad."""
    context: str = "skills"
    """Per-task-type guidance (``privileged`` expert info is the alternative)."""

    def apply(self, batch: HeadBatch) -> HeadOutput:
        gate = torch.sigmoid(self.beta * teacher_gap(batch, self.name))
        term, metrics = gated_distillation_term(batch, gate, self.name)
        loss = self.coef * term
        if self.replaces_loss:
            return HeadOutput(replace_loss=loss, metrics=metrics)
        return HeadOutput(aux_loss=loss, metrics=metrics)
