"""OPSD: the OPSD authors' on-policy self-distillation (generalized JSD to a privileged teacher).

Formula (``loss="jsd"``, the default)::

    S_t, T_t = student / teacher next-token distributions at response position t, full
               vocabulary; the teacher reads prompt ⊕ privileged context, the student the plain
               prompt; both on the student's own sampled rollout
    M_t      = (1 − β)·S_t + β·T_t
    L        = mean_t [ β·KL(T_t‖M_t) + (1 − β)·KL(S_t‖M_t) ]     β = 0.5: Jensen–Shannon
               (β = 0 → KL(T‖S), β = 1 → KL(S‖T), the reference's special cases)

Variant ``loss="pg"`` (their ``--use_tinker_loss``): the teacher/student gap on the sampled token
as a per-token reward in a plain policy gradient, no ratio, no clip, no baseline::

    L = −mean_t stopgrad(q_t − s_t)·s_t

Gradients reach the student only (the teacher runs without grad). There is **no RL term and no
KL-to-reference** (``entropy_coef = kl_coef = 0``): the loss replaces GRPO's. ``mean_t`` is the
token-mean over the teacher rows' response tokens of the whole update batch.

Defaults (the reference recipe): β = 0.5, teacher = the **frozen initial policy** (their
``--fixed_teacher``, which the README marks "recommended"; ``current`` = their default without
it, ``ema`` = their ``--use_ema_teacher``). Their loss runs at the sampling temperature
(1.1 in the recipes) on both logits: in sdgym that is ``temperature = 1.1`` with
``tempered_logprobs = True`` (the logits a head receives are then tempered), and the head's own
``loss_temperature`` (default 1) divides them further. ``top_k_loss`` keeps the teacher's top-k
tokens and renormalises both over them (their ``--top_k_loss``; off by default).
Differences that stay (recorded in every run): the reference averages per micro-batch and over
gradient accumulation, sdgym over the whole batch (micro-batch invariant); the reference's
recipe lr is 2e-4 with LoRA. Context: ``privileged`` (the reference solution's analogue).
Source: arXiv 2601.18734; ref siyan-zhao/OPSD ``opsd_trainer.py`` (``generalized_jsd_loss``,
``compute_loss``, ``--fixed_teacher``, ``--use_tinker_loss``). Not inferred.
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
    generalized_jsd,
    masked_float,
    require,
    teacher_gap,
    teacher_rows,
    term_mean,
)

LOSSES = ("jsd", "pg")


@register_head
@dataclass(kw_only=True)
class OPSDHead(Head):
    """Full-vocabulary generalized JSD (or the sampled-token PG variant) to a privileged teacher."""

    name = "opsd"
    row = 1
    source = "siyan-zhao/OPSD `opsd_trainer.py` (arXiv 2601.18734)"
    needs_teacher = True
    needs_logits = True
    replaces_loss = True
    reference: ClassVar[dict[str, Any]] = {
        "beta": 0.5, "loss": "jsd", "teacher_weights": "frozen", "loss_temperature": 1.0,
        "top_k_loss": None, "entropy_coef": 0.0, "kl_coef": 0.0,
        "rollout.temperature": 1.1, "grpo.tempered_logprobs": True, "grpo.lr": 2e-4}
    notes: ClassVar[tuple[str, ...]] = (
        "loss is a token-mean over the whole update batch (reference: mean of per-micro-batch "
        "token-means)",
        "full fine-tuning (reference recipe: LoRA r=64, alpha=128)",
    )

    beta: float = 0.5
    """``β`` of the generalized JSD: 0.5 the Jensen–Shannon divergence, 0 ``KL(T‖S)``,
    1 ``KL(S‖T)`` (``loss="jsd"``)."""
    loss: str = "jsd"
    """``jsd`` (full-vocabulary generalized JSD) or ``pg`` (the teacher/student gap on the
    sampled token as a per-token reward, their ``--use_tinker_loss``)."""
    loss_temperature: float = 1.0
    """Temperature that further divides both logits inside the JSD (> 0)."""
    top_k_loss: int | None = None
    """Keep the teacher's top-k tokens and renormalise both distributions over them (their
    ``--top_k_loss``); None: the full vocabulary."""
    teacher_weights: str = "frozen"
    """``frozen``: their ``--fixed_teacher`` (recommended); ``current``: their default;
    ``ema``: their ``--use_ema_teacher``."""
    context: str = "privileged"
    """The reference solution's analogue."""
    entropy_coef: float | None = 0.0
    """No entropy bonus (the loss replaces GRPO's)."""
    kl_coef: float | None = 0.0
    """No KL-to-reference (the loss replaces GRPO's)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.loss not in LOSSES:
            raise ValueError(f"opsd loss must be one of {LOSSES}, got {self.loss!r}")
        if not 0.0 <= self.beta <= 1.0:
            raise ValueError(f"opsd beta must be in [0, 1], got {self.beta}")
        if self.loss_temperature <= 0:
            raise ValueError(f"opsd loss_temperature must be > 0, got {self.loss_temperature}")

    def wants_logits(self) -> bool:
        return self.loss == "jsd"

    def divergence(self, batch: HeadBatch) -> torch.Tensor:
        """Per-token generalized JSD ``[rows, tokens]`` (with grad through the student logits)."""
        if batch.student_logits is None:
            raise ValueError("head 'opsd' needs batch.student_logits")
        teacher_logits = require(batch.teacher_logits, "teacher_logits", self.name)
        student = batch.student_logits.float() / self.loss_temperature
        teacher = teacher_logits.float() / self.loss_temperature
        if self.top_k_loss and self.top_k_loss < student.shape[-1]:
            index = teacher.topk(self.top_k_loss, dim=-1).indices
            student, teacher = student.gather(-1, index), teacher.gather(-1, index)
        return generalized_jsd(torch.log_softmax(student, -1), torch.log_softmax(teacher, -1),
                               self.beta)

    def apply(self, batch: HeadBatch) -> HeadOutput:
        mask = teacher_rows(batch)
        if self.loss == "pg":
            reward = teacher_gap(batch, self.name)
            per_token = -reward * batch.student_logprobs
            metrics = {f"{self.name}/reward_mean": masked_float(reward, mask)}
        else:
            per_token = self.divergence(batch)
            metrics = {f"{self.name}/jsd_mean": masked_float(per_token, mask)}
            if batch.teacher_logits is not None and batch.student_logits is not None:
                kl = categorical_kl(torch.log_softmax(batch.teacher_logits.float(), -1),
                                    torch.log_softmax(batch.student_logits.detach().float(), -1))
                metrics[f"{self.name}/kl_teacher_student"] = masked_float(kl, mask)
        loss = term_mean(per_token, mask, batch)
        metrics[f"{self.name}/loss"] = masked_float(per_token, mask)
        return HeadOutput(replace_loss=loss, metrics=metrics)
