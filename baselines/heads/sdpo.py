"""SDPO: self-distillation from a teacher that sees a successful sibling, replacing the PG loss.

Formula (METHODS.md; reference semantics of ``compute_self_distillation_loss``)::

    S, T   = student / teacher log-probs over the student's top-k tokens (k = 100) plus a tail
             bucket log(1 − Σ_topk p); the teacher is gathered at the student's top-k indices
    M      = (1 − α)·S + α·T                                   (mixture, in probability space)
    D_t    = (1 − α)·KL(S‖M) + α·KL(T‖M)      α = 0.5: Jensen–Shannon
             (α = 0 → KL(T‖S), α = 1 → KL(S‖T), as in the reference)
    r_t    = stopgrad min(exp(clamp(s_t − o_t, ±20)), is_clip)  (importance weight, upper clip 2)
    L      = mean_t r_t·D_t   over masked tokens of rows with ``batch.has_teacher``
             (token-mean over those rows' tokens of the whole update batch)

Gradients reach the student through its top-k log-probs (teacher logits carry none).
Rows without a teacher context (no successful sibling, no feedback): the reference drops them
from the loss (they get no gradient; the token-mean runs over teacher rows only; an all-empty
batch gives loss 0). That is the default ``no_teacher_rows="skip"`` (``replace_loss``).
``no_teacher_rows="grpo"`` instead keeps GRPO on those rows: it returns the advantages with
teacher rows zeroed plus the distillation term as ``aux_loss``.

Defaults (``config/actor/actor.yaml`` + ``sdpo.yaml``): top-k 100 with tail, α = 0.5,
is_clip = 2, EMA teacher with update rate 0.05 (the reference ``teacher_update_rate``), **no
entropy bonus and no KL-to-reference** (``entropy_coeff: 0``, ``use_kl_loss: false``), lr 1e-5.
The teacher is scored once per batch before the update (the reference scores it per
micro-batch inside the actor with the EMA weights, which do not change during the update: the
same numbers). Context: ``sibling`` (a successful rollout from the same
group, plus environment feedback; building it is the trainer's job). ``needs_logits``.
Source: arXiv 2601.20802; ref lasgroup/SDPO ``verl/trainer/ppo/core_algos.py``
(``compute_self_distillation_loss``) and ``verl/workers/actor/dp_actor.py``. Not inferred.
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
    generalized_jsd,
    masked_float,
    require,
    teacher_rows,
    term_mean,
)


def with_tail(log_probs: torch.Tensor) -> torch.Tensor:
    """Append the log of the mass outside the given buckets (``log(1 − Σ p)``)."""
    covered = torch.logsumexp(log_probs, dim=-1, keepdim=True).clamp(max=-1e-7)
    return torch.cat([log_probs, torch.log(-torch.expm1(covered))], dim=-1)


@register_head
@dataclass(kw_only=True)
class SDPOHead(Head):
    """Top-k + tail JSD distillation on rows that have a sibling-conditioned teacher."""

    name = "sdpo"
    row = 10
    source = "lasgroup/SDPO `core_algos.py` (arXiv 2601.20802)"
    needs_teacher = True
    needs_logits = True
    replaces_loss = True
    reference: ClassVar[dict[str, Any]] = {
        "topk": 100, "add_tail": True, "alpha": 0.5, "is_clip": 2.0, "no_teacher_rows": "skip",
        "teacher_weights": "ema", "ema_decay": 0.05, "entropy_coef": 0.0, "kl_coef": 0.0,
        "grpo.lr": 1e-5}
    notes: ClassVar[tuple[str, ...]] = (
        "loss is a token-mean over the teacher rows of the whole update batch (reference: "
        "per micro-batch, scaled by 1/gradient-accumulation steps)",
    )

    topk: int = 100
    """Tokens of the student's top-k that the divergence runs over (0: the full vocabulary)."""
    add_tail: bool = True
    """Add a tail bucket ``log(1 − Σ_topk p)`` (else renormalise over the top-k)."""
    alpha: float = 0.5
    """``α`` of the mixture ``M = (1 − α)·S + α·T``: 0.5 Jensen–Shannon, 0 ``KL(T‖S)``,
    1 ``KL(S‖T)``."""
    is_clip: float | None = 2.0
    """Upper clip of the importance weight ``exp(s_t − o_t)`` (None: no importance weight)."""
    no_teacher_rows: str = "skip"
    """Rows without a teacher context: ``skip`` (no gradient, the reference) or ``grpo`` (keep
    GRPO on them, the distillation term added)."""
    teacher_weights: str = "ema"
    """An EMA teacher (the reference's)."""
    context: str = "sibling"
    """A successful rollout from the same group, plus environment feedback."""
    ema_decay: float = 0.05
    """The reference ``teacher_update_rate``."""
    entropy_coef: float | None = 0.0
    """No entropy bonus (``entropy_coeff: 0``)."""
    kl_coef: float | None = 0.0
    """No KL-to-reference (``use_kl_loss: false``)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.no_teacher_rows not in ("skip", "grpo"):
            raise ValueError("no_teacher_rows must be 'skip' or 'grpo'")

    def divergence(self, batch: HeadBatch) -> torch.Tensor:
        """Per-token ``D_t`` ``[rows, tokens]`` (with grad through the student logits)."""
        if batch.student_logits is None:
            raise ValueError("head 'sdpo' needs batch.student_logits")
        teacher_logits = require(batch.teacher_logits, "teacher_logits", self.name)
        student = torch.log_softmax(batch.student_logits.float(), dim=-1)
        teacher = torch.log_softmax(teacher_logits.float(), dim=-1)
        if self.topk and self.topk < student.shape[-1]:
            index = student.detach().topk(self.topk, dim=-1).indices
            student, teacher = student.gather(-1, index), teacher.gather(-1, index)
            if self.add_tail:
                student, teacher = with_tail(student), with_tail(teacher)
            else:
                student = student - torch.logsumexp(student, dim=-1, keepdim=True)
                teacher = teacher - torch.logsumexp(teacher, dim=-1, keepdim=True)
        return generalized_jsd(student, teacher, self.alpha)

    def apply(self, batch: HeadBatch) -> HeadOutput:
        per_token = self.divergence(batch)
        ratio = torch.ones_like(per_token)
        if self.is_clip is not None:
            log_ratio = (batch.student_logprobs - batch.old_logprobs).detach().clamp(-20.0, 20.0)
            ratio = log_ratio.exp().clamp(max=self.is_clip)
        mask = teacher_rows(batch)
        loss = term_mean(ratio * per_token, mask, batch)
        rows = mask.sum(dim=-1) > 0
        metrics = {
            f"{self.name}/loss": masked_float(ratio * per_token, mask),
            f"{self.name}/divergence_mean": masked_float(per_token, mask),
            f"{self.name}/is_ratio_mean": masked_float(ratio, mask),
            f"{self.name}/teacher_row_fraction": masked_float(rows.float(), torch.ones_like(rows)),
            f"{self.name}/empty_target_batch": float(not bool(rows.any())),
        }
        if self.no_teacher_rows == "skip":
            return HeadOutput(replace_loss=loss, metrics=metrics)
        keep = (1.0 - rows.to(batch.advantages.dtype).unsqueeze(-1)) * batch.mask
        return HeadOutput(
            advantages=batch.advantages.detach() * keep, aux_loss=loss, metrics=metrics
        )
