"""SDFT: on-policy self-distillation from a demonstration-conditioned EMA teacher.

Formula (METHODS.md)::

    P_t = softmax(student logits at t)  (plain prompt, with grad)
    Q_t = softmax(teacher logits at t)  (prompt ⊕ expert demonstration, no grad)
    D_t = KL(Q_t‖P_t)   ("forward", default)   or   KL(P_t‖Q_t)   ("reverse")   full vocabulary
    L   = mean_rows [ mean_{t ≥ skip} D_t ]      per-sequence mean, then mean over rows;
                                                 the first ``skip_tokens`` = 3 tokens skipped

The loss replaces GRPO's; no entropy bonus and no KL-to-reference. Rows without a teacher
context, and rows with no token past the skipped ones, are not in the mean.

Defaults (the reference recipe): forward KL, EMA teacher θ_T ← 0.99·θ_T + 0.01·θ
(``ref_model_mixup_alpha = 0.01``, synced every step), ``skip_tokens = 3``
(``num_loss_tokens_to_skip``), lr 2e-5. Direction: METHODS.md and the reference's help text say
forward; the copy of the reference read here defaults its ``alpha`` to 1.0 (reverse) — the
project keeps forward and ``direction`` switches. TRL's port (``trl/experimental/sdft``) defaults
instead to a top-100 JSD with a frozen base teacher.
Context: ``demonstration`` (the env's expert plan from that turn). ``needs_logits``.
Source: arXiv 2601.19897; ref idanshen/Self-Distillation ``distil_trainer.py`` (``_compute_loss``)
read through a public fork; TRL ``trl/experimental/sdft``. Not inferred.
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
    categorical_kl,
    masked_float,
    require,
)

DIRECTIONS = ("forward", "reverse")


@register_head
@dataclass(kw_only=True)
class SDFTHead(Head):
    """Full-vocabulary per-token KL to the demonstration-conditioned teacher."""

    name = "sdft"
    row = 11
    source = "idanshen/Self-Distillation `distil_trainer.py` (arXiv 2601.19897)"
    needs_teacher = True
    needs_logits = True
    replaces_loss = True
    reference: ClassVar[dict[str, Any]] = {
        "direction": "forward", "teacher_weights": "ema", "ema_decay": 0.01, "skip_tokens": 3,
        "entropy_coef": 0.0, "kl_coef": 0.0, "grpo.lr": 2e-5}
    notes: ClassVar[tuple[str, ...]] = (
        "reference copy read defaults alpha=1.0 (reverse KL) against its help text (forward); "
        "sdgym follows METHODS.md (forward)",
    )

    direction: str = "forward"
    """``forward`` ``KL(Q‖P)`` (METHODS.md) or ``reverse`` ``KL(P‖Q)``."""
    skip_tokens: int = 3
    """Response tokens left out of the loss at the start of each row
    (``num_loss_tokens_to_skip``, >= 0)."""
    teacher_weights: str = "ema"
    """An EMA teacher (the reference's)."""
    context: str = "demonstration"
    """The env's expert plan from that turn."""
    ema_decay: float = 0.01
    """``ref_model_mixup_alpha``: ``θ_T ← 0.99·θ_T + 0.01·θ`` every step."""
    entropy_coef: float | None = 0.0
    """No entropy bonus (the loss replaces GRPO's)."""
    kl_coef: float | None = 0.0
    """No KL-to-reference (the loss replaces GRPO's)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}")
        if self.skip_tokens < 0:
            raise ValueError(f"sdft skip_tokens must be >= 0, got {self.skip_tokens}")

    def term_mask(self, mask: torch.Tensor, has_teacher: torch.Tensor | None) -> torch.Tensor:
        """Teacher rows' tokens from the ``skip_tokens``-th response token on."""
        kept = super().term_mask(mask, has_teacher).clone()
        kept[:, : self.skip_tokens] = 0.0
        return kept

    def apply(self, batch: HeadBatch) -> HeadOutput:
        if batch.student_logits is None:
            raise ValueError("head 'sdft' needs batch.student_logits")
        teacher_logits = require(batch.teacher_logits, "teacher_logits", self.name)
        student = torch.log_softmax(batch.student_logits.float(), dim=-1)
        teacher = torch.log_softmax(teacher_logits.float(), dim=-1)
        forward = categorical_kl(teacher, student)
        reverse = categorical_kl(student, teacher)
        per_token = forward if self.direction == "forward" else reverse
        mask = self.term_mask(batch.mask, batch.has_teacher)
        tokens = mask.sum(dim=-1)
        per_row = (per_token * mask).sum(dim=-1) / tokens.clamp(min=1.0)
        rows = batch.totals.term_rows if batch.totals is not None else float((tokens > 0).sum())
        loss = per_row.sum() / max(rows, 1.0)
        live = (tokens > 0).float()
        metrics = {
            f"{self.name}/loss": float((per_row.detach() * live).sum() / live.sum().clamp(min=1)),
            f"{self.name}/forward_kl_mean": masked_float(forward, mask),
            f"{self.name}/reverse_kl_mean": masked_float(reverse, mask),
        }
        return HeadOutput(replace_loss=loss, metrics=metrics)
