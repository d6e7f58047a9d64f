"""SkillSD: GRPO plus an importance-weighted k3 self-distillation loss toward a skills teacher.

Formula (METHODS.md)::

    ℓ_t = s_t − q_t                     ρ_t = exp(min(s_t − o_t, 10))
    L   = L0 + λ · mean_t ρ_t·(e^{−ℓ_t} − 1 + ℓ_t)     (token-mean over teacher rows)

``e^{−ℓ} − 1 + ℓ`` is Schulman's k3 estimate of KL(π_θ‖π_T) on the sampled token (≥ 0, zero
when s = q). Gradients flow through both ``ℓ_t`` and ``ρ_t`` (as in the reference and the
formula: only ``q_t`` and ``o_t`` are constants); per token ``∂/∂s_t = ρ_t·ℓ_t / N``, so
descent moves ``s_t`` toward ``q_t`` from either side. ``−ℓ_t`` is clamped at 20 inside the
exponential for stability, as in the reference.

Defaults: λ = 0.001 (reference recipe ``sdl_lambda``). Context: ``skills``. Teacher
weights: ``current`` (the reference scores the skill-augmented prompt with the actor at
rollout time, no grad).
Source: arXiv 2604.10674; ref ZJU-REAL/SDAR ``verl/trainer/ppo/skillsd_utils.py``. Not inferred.
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
    masked_float,
    require,
    teacher_rows,
    term_mean,
)


@register_head
@dataclass(kw_only=True)
class SkillSDHead(Head):
    """Additive on-policy-weighted k3 distillation."""

    name = "skill_sd"
    row = 5
    source = "ZJU-REAL/SDAR `skillsd_utils.py` (arXiv 2604.10674)"
    needs_teacher = True
    reference: ClassVar[dict[str, Any]] = {
        "coef": 0.001, "ratio_log_cap": 10.0, "teacher_weights": "current"}

    coef: float = 0.001
    """``λ``: weight of the k3 distillation term (the reference's ``sdl_lambda``)."""
    ratio_log_cap: float = 10.0
    """Cap of ``s_t − o_t`` inside the importance weight ``ρ_t = exp(min(s_t − o_t, cap))``."""
    teacher_weights: str = "current"
    """The reference scores the skill-augmented prompt with the actor, without grad."""
    context: str = "skills"
    """Per-task-type guidance."""

    def apply(self, batch: HeadBatch) -> HeadOutput:
        teacher = require(batch.teacher_logprobs, "teacher_logprobs", self.name)
        student = batch.student_logprobs
        ell = student - teacher
        k3 = torch.exp((-ell).clamp(max=20.0)) - 1.0 + ell
        rho = torch.exp((student - batch.old_logprobs.detach()).clamp(max=self.ratio_log_cap))
        mask = teacher_rows(batch)
        term = term_mean(rho * k3, mask, batch)
        metrics = {
            f"{self.name}/loss": masked_float(rho * k3, mask),
            f"{self.name}/k3_kl_mean": masked_float(k3, mask),
            f"{self.name}/ratio_mean": masked_float(rho, mask),
            f"{self.name}/teacher_gap_mean": masked_float(-ell, mask),
        }
        return HeadOutput(aux_loss=self.coef * term, metrics=metrics)
