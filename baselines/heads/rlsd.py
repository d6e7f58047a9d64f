"""RLSD: token-level reshaping of the GRPO advantage by the teacher/student ratio.

Formula (METHODS.md)::

    δ_t = stopgrad(q_t − o_t)                   (rollout-time log-probs, once per batch)
    w_t = clip(exp(sign(A)·δ_t), 1 − ε, 1 + ε)
    Â_t = A·[(1 − λ) + λ·w_t]        λ = λ0·max(0, 1 − step/warmdown_steps)

For ``A > 0`` tokens the teacher prefers get more credit; for ``A < 0`` the factor uses
``exp(−δ_t)`` so tokens the teacher disfavours get more blame. The sign of ``Â_t`` always
equals the sign of ``A``; ``Â_t`` is zero on masked tokens, and equals ``A`` on rows without a
teacher context (δ = 0 there).

Scope ``batch``: runs once on the whole rollout batch before the update, as the reference does.
Defaults: λ0 = 0.5 decayed linearly to 0 over 100 steps (the reference recipes; its trainer's
built-in default is 50), ε = 0.2, ``gap_source="old"`` (δ from the rollout log-probs, as in the
reference; ``"student"`` uses the pre-update re-scored log-probs, equal at T = 1).
Context: ``skills``. Teacher weights: ``current`` (reference).
Source: arXiv 2604.03128; ref ZJU-REAL/SDAR ``verl/trainer/ppo/rlsd_utils.py``
(``compute_rlsd_token_advantage``) and ``rlsd_ray_trainer.py``. Not inferred.
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
    linear_warmdown,
    masked_float,
    teacher_gap,
    teacher_rows,
)


@register_head
@dataclass(kw_only=True)
class RLSDHead(Head):
    """Advantage reshaping with a clipped, sign-aware teacher/student ratio."""

    name = "rlsd"
    row = 6
    source = "ZJU-REAL/SDAR `rlsd_utils.py` (arXiv 2604.03128)"
    needs_teacher = True
    scope = "batch"
    reference: ClassVar[dict[str, Any]] = {
        "lam": 0.5, "warmdown_steps": 100, "clip_eps": 0.2, "gap_source": "old",
        "teacher_weights": "current"}

    lam: float = 0.5
    """``λ0``: the share of the reshaped advantage at step 0."""
    warmdown_steps: int = 100
    """Steps over which ``λ`` decays linearly to 0 (<= 0: constant ``λ0``)."""
    clip_eps: float = 0.2
    """``ε``: the ratio weight is clipped to ``[1 − ε, 1 + ε]``."""
    gap_source: str = "old"
    """``δ_t`` from the rollout log-probs (``old``, the reference) or the pre-update re-scored
    ones (``student``)."""
    teacher_weights: str = "current"
    """The reference's."""
    context: str = "skills"
    """Per-task-type guidance."""

    def apply(self, batch: HeadBatch) -> HeadOutput:
        lam = linear_warmdown(self.lam, batch.step, self.warmdown_steps)
        delta = teacher_gap(batch, self.name, self.gap_source)
        adv = batch.advantages.detach()
        weight = torch.exp(torch.sign(adv) * delta).clamp(1.0 - self.clip_eps, 1.0 + self.clip_eps)
        factor = (1.0 - lam) + lam * weight
        reshaped = adv * factor * batch.mask.to(adv.dtype)
        mask = teacher_rows(batch)
        metrics = {
            f"{self.name}/lambda": lam,
            f"{self.name}/factor_mean": masked_float(factor, mask),
            f"{self.name}/weight_mean": masked_float(weight, mask),
            f"{self.name}/teacher_gap_mean": masked_float(delta, mask),
        }
        return HeadOutput(advantages=reshaped, metrics=metrics)
