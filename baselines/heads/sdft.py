"""SDFT: on-policy self-distillation from a demonstration-conditioned EMA teacher.

Formula (METHODS.md)::

    P_t = softmax(student logits at t)  (plain prompt, with grad)
    Q_t = softmax(teacher logits at t)  (prompt ⊕ expert demonstration, no grad)
    L   = mean_t KL(Q_t‖P_t)   ("forward", default: the reference recipe)
       or mean_t KL(P_t‖Q_t)   ("reverse")        — full vocabulary, replaces the PG loss

Token-mean over ``batch.mask`` (restricted to ``batch.has_teacher`` rows when given).
Defaults: ``direction="forward"``; EMA teacher, update rate 0.05 (METHODS.md; TRL's port
defaults to the frozen base model — ``teacher_weights="frozen"`` switches to that).
Context: ``demonstration`` (the env's expert plan, e.g. ``expert_plan``). ``needs_logits``.
Source: arXiv 2601.19897; ref idanshen/Self-Distillation (not retrievable here; semantics
from METHODS.md and TRL's ``trl/experimental/sdft`` documentation). Not inferred.
"""

from __future__ import annotations

from typing import Any

import torch

from baselines.heads import register_head
from baselines.heads.base import (
    HeadBatch,
    HeadOutput,
    TeacherHead,
    categorical_kl,
    masked_float,
    masked_mean,
    require,
    teacher_row_mask,
)

DIRECTIONS = ("forward", "reverse")


@register_head
class SDFTHead(TeacherHead):
    """Full-vocabulary per-token KL to the demonstration-conditioned teacher."""

    name = "sdft"
    needs_teacher = True
    needs_logits = True

    def __init__(
        self,
        direction: str = "forward",
        teacher_weights: str = "ema",
        context: str = "demonstration",
        ema_decay: float = 0.05,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            teacher_weights=teacher_weights, context=context, ema_decay=ema_decay, **kwargs
        )
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}")
        self.direction = direction

    def apply(self, batch: HeadBatch) -> HeadOutput:
        if batch.student_logits is None:
            raise ValueError("head 'sdft' needs batch.student_logits")
        teacher_logits = require(batch.teacher_logits, "teacher_logits", self.name)
        student = torch.log_softmax(batch.student_logits.float(), dim=-1)
        teacher = torch.log_softmax(teacher_logits.float(), dim=-1)
        forward = categorical_kl(teacher, student)
        reverse = categorical_kl(student, teacher)
        per_token = forward if self.direction == "forward" else reverse
        mask = teacher_row_mask(batch)
        loss = masked_mean(per_token, mask)
        metrics = {
            f"{self.name}/loss": float(loss.detach()),
            f"{self.name}/forward_kl_mean": masked_float(forward, mask),
            f"{self.name}/reverse_kl_mean": masked_float(reverse, mask),
        }
        return HeadOutput(replace_loss=loss, metrics=metrics)
