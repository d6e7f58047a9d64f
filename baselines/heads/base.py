"""The teacher-head interface shared by GRPO and every self-distillation method.

A head receives a :class:`HeadBatch` (per-token tensors ``[rows, tokens]`` of one training
micro-batch plus per-row ids) and returns a :class:`HeadOutput` with any of:

* ``advantages`` — reshaped per-token advantages that replace ``A`` inside the GRPO loss ``L0``;
* ``aux_loss`` — a scalar added to ``L0``;
* ``replace_loss`` — a scalar that replaces ``L0`` entirely.

Notation (METHODS.md): ``s_t`` student log-prob with grad, ``q_t`` teacher log-prob (no grad) on
the prompt plus privileged context, ``o_t`` rollout log-prob, ``δ_t = stopgrad(q_t − s_t)``,
``A`` the GRPO advantage. A head declares which teacher weights it wants (``current`` weights
without grad, the ``frozen`` initial policy, or an ``ema`` of the policy), which context
(``privileged`` text, per-task-type ``skills``, a successful ``sibling`` trajectory,
``hindsight`` notes, or an expert ``demonstration``), and whether it needs full logits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from baselines.grpo import masked_mean

TEACHER_WEIGHTS: tuple[str, ...] = ("current", "frozen", "ema")
CONTEXT_SOURCES: tuple[str, ...] = ("privileged", "skills", "sibling", "hindsight", "demonstration")


@dataclass
class HeadBatch:
    """What a head sees for one micro-batch (tensors are ``[rows, tokens]`` unless noted)."""

    student_logprobs: torch.Tensor
    old_logprobs: torch.Tensor
    advantages: torch.Tensor
    mask: torch.Tensor
    teacher_logprobs: torch.Tensor | None = None
    has_teacher: torch.Tensor | None = None
    """``[rows]`` bool: rows that have a teacher context (e.g. SDPO needs a successful sibling)."""
    student_logits: torch.Tensor | None = None
    """``[rows, tokens, vocab]`` when the head sets ``needs_logits``."""
    teacher_logits: torch.Tensor | None = None
    group_ids: list[int] = field(default_factory=list)
    traj_ids: list[int] = field(default_factory=list)
    turn_ids: list[int] = field(default_factory=list)
    won: list[bool] = field(default_factory=list)
    group_success_rate: list[float] = field(default_factory=list)
    """Per row: the share of its group's episodes that were won (AgentOPSD's V0)."""
    step: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class HeadOutput:
    """A head's contribution (any field may be None) and its diagnostics."""

    advantages: torch.Tensor | None = None
    aux_loss: torch.Tensor | None = None
    replace_loss: torch.Tensor | None = None
    metrics: dict[str, float] = field(default_factory=dict)


class TeacherHead:
    """Base class: plain GRPO (no teacher, returns nothing)."""

    name: ClassVar[str] = "grpo"
    needs_teacher: ClassVar[bool] = False
    needs_logits: ClassVar[bool] = False

    def __init__(
        self,
        teacher_weights: str = "frozen",
        context: str = "privileged",
        ema_decay: float = 0.05,
        context_budget_chars: int = 2000,
    ) -> None:
        if teacher_weights not in TEACHER_WEIGHTS:
            raise ValueError(f"teacher_weights must be one of {TEACHER_WEIGHTS}")
        if context not in CONTEXT_SOURCES:
            raise ValueError(f"context must be one of {CONTEXT_SOURCES}")
        self.teacher_weights = teacher_weights
        self.context = context
        self.ema_decay = ema_decay
        self.context_budget_chars = context_budget_chars

    def config(self) -> dict[str, Any]:
        """Everything that defines this head's behaviour, recorded in every run."""
        return {
            "name": self.name,
            "teacher_weights": self.teacher_weights if self.needs_teacher else None,
            "context": self.context if self.needs_teacher else None,
            "ema_decay": self.ema_decay,
            "context_budget_chars": self.context_budget_chars,
            **{k: v for k, v in vars(self).items() if k not in (
                "teacher_weights", "context", "ema_decay", "context_budget_chars")},
        }

    def apply(self, batch: HeadBatch) -> HeadOutput:
        """Reshape advantages and/or add or replace the loss for this batch."""
        del batch
        return HeadOutput()


# --- shared helpers for the teacher heads (one formula, one place) ---------------------------


def masked_float(values: torch.Tensor, mask: torch.Tensor) -> float:
    """:func:`masked_mean` of detached ``values`` as a Python float (for metrics)."""
    return float(masked_mean(values.detach().float(), mask))


def require(tensor: torch.Tensor | None, what: str, head: str) -> torch.Tensor:
    """Return ``tensor`` detached, or raise a clear error naming the head that needs it."""
    if tensor is None:
        raise ValueError(f"head {head!r} needs batch.{what}")
    return tensor.detach()


def teacher_gap(batch: HeadBatch, head: str, source: str = "student") -> torch.Tensor:
    """``δ_t = stopgrad(q_t − s_t)``, 0 on masked tokens (``source="old"``: ``o_t`` for ``s_t``)."""
    teacher = require(batch.teacher_logprobs, "teacher_logprobs", head)
    if source not in ("student", "old"):
        raise ValueError(f"gap source must be 'student' or 'old', got {source!r}")
    student = batch.student_logprobs if source == "student" else batch.old_logprobs
    gap = teacher - student.detach()
    return torch.where(batch.mask.bool(), gap, torch.zeros_like(gap))


def gated_distillation_term(
    batch: HeadBatch, gate: torch.Tensor, head: str
) -> tuple[torch.Tensor, dict[str, float]]:
    """``mean_t g_t·(q_t − s_t)`` over ``batch.mask`` with the gate and teacher detached.

    The gradient w.r.t. ``s_t`` is ``−g_t / N``: descent raises the student's log-prob of
    the sampled token, most where the teacher prefers it (large gate).
    """
    teacher = require(batch.teacher_logprobs, "teacher_logprobs", head)
    gate = gate.detach()
    gap = teacher - batch.student_logprobs.detach()
    loss = masked_mean(gate * (teacher - batch.student_logprobs), batch.mask)
    metrics = {
        f"{head}/loss": float(loss.detach()),
        f"{head}/gate_mean": masked_float(gate, batch.mask),
        f"{head}/gate_active": masked_float((gate > 0.5).float(), batch.mask),
        f"{head}/teacher_gap_mean": masked_float(gap, batch.mask),
    }
    return loss, metrics


def linear_warmdown(initial: float, step: int, steps: int) -> float:
    """``initial·max(0, 1 − step/steps)``; ``steps <= 0`` keeps ``initial`` constant."""
    if steps <= 0:
        return float(initial)
    return float(initial) * max(0.0, 1.0 - step / steps)


def row_values(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per row, the value at its first unmasked token (0 for a fully masked row)."""
    valid = mask.bool()
    first = valid.int().argmax(dim=-1)
    picked = values.gather(-1, first.unsqueeze(-1)).squeeze(-1)
    return torch.where(valid.any(dim=-1), picked, torch.zeros_like(picked))


def teacher_row_mask(batch: HeadBatch) -> torch.Tensor:
    """``batch.mask`` restricted to rows with a teacher context (all rows if unknown)."""
    mask = batch.mask.float()
    if batch.has_teacher is None:
        return mask
    return mask * batch.has_teacher.to(mask.device).float().unsqueeze(-1)


def categorical_kl(log_p: torch.Tensor, log_q: torch.Tensor) -> torch.Tensor:
    """``KL(p‖q) = Σ_v p_v (log p_v − log q_v)`` over the last axis (inputs are log-probs)."""
    p = log_p.exp()
    terms = torch.where(p > 0, p * (log_p - log_q), torch.zeros_like(p))
    return terms.sum(dim=-1)
