"""RLSD: token-level reshaping of the GRPO advantage by the teacher/student ratio.

Formula (METHODS.md)::

    δ_t = stopgrad(q_t − s_t)
    w_t = clip(exp(sign(A)·δ_t), 1 − ε, 1 + ε)
    Â_t = A·[(1 − λ) + λ·w_t]        λ = λ0·max(0, 1 − step/warmdown_steps)

For ``A > 0`` tokens the teacher prefers get more credit; for ``A < 0`` the factor uses
``exp(−δ_t)`` so tokens the teacher disfavours get more blame. The sign of ``Â_t`` always
equals the sign of ``A``; ``Â_t`` is zero on masked tokens.

Defaults: λ0 = 0.5 decayed linearly to 0 over 100 steps (``batch.step``), ε = 0.2.
``gap_source="student"`` follows METHODS.md (δ from the detached current log-prob); the
reference computes δ once per batch from the rollout log-prob (``"old"``), identical at the
first PPO epoch. The reference trainer's built-in default warm-down is 50 steps; its recipes
(and METHODS.md) use 100. Context: ``skills``. Teacher weights: ``current`` (reference).
Source: arXiv 2604.03128; ref ZJU-REAL/SDAR ``verl/trainer/ppo/rlsd_utils.py``
(``compute_rlsd_token_advantage``) and ``rlsd_ray_trainer.py``. Not inferred.
"""

from __future__ import annotations

from typing import Any

import torch

from baselines.heads import register_head
from baselines.heads.base import (
    HeadBatch,
    HeadOutput,
    TeacherHead,
    linear_warmdown,
    masked_float,
    teacher_gap,
)


@register_head
class RLSDHead(TeacherHead):
    """Advantage reshaping with a clipped, sign-aware teacher/student ratio."""

    name = "rlsd"
    needs_teacher = True

    def __init__(
        self,
        lam: float = 0.5,
        warmdown_steps: int = 100,
        clip_eps: float = 0.2,
        gap_source: str = "student",
        teacher_weights: str = "current",
        context: str = "skills",
        **kwargs: Any,
    ) -> None:
        super().__init__(teacher_weights=teacher_weights, context=context, **kwargs)
        self.lam = lam
        self.warmdown_steps = warmdown_steps
        self.clip_eps = clip_eps
        self.gap_source = gap_source

    def apply(self, batch: HeadBatch) -> HeadOutput:
        lam = linear_warmdown(self.lam, batch.step, self.warmdown_steps)
        delta = teacher_gap(batch, self.name, self.gap_source)
        adv = batch.advantages.detach()
        weight = torch.exp(torch.sign(adv) * delta).clamp(1.0 - self.clip_eps, 1.0 + self.clip_eps)
        factor = (1.0 - lam) + lam * weight
        reshaped = adv * factor * batch.mask.to(adv.dtype)
        metrics = {
            f"{self.name}/lambda": lam,
            f"{self.name}/factor_mean": masked_float(factor, batch.mask),
            f"{self.name}/weight_mean": masked_float(weight, batch.mask),
            f"{self.name}/teacher_gap_mean": masked_float(delta, batch.mask),
        }
        return HeadOutput(advantages=reshaped, metrics=metrics)
