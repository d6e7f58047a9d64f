"""The head contract: the base class :class:`Head` of GRPO (``heads/grpo.py``, the no-op)
and of every self-distillation method (one file per head, registered with ``@register_head``).

A head receives a :class:`HeadBatch` (per-token tensors ``[rows, tokens]`` plus per-row ids) and
returns a :class:`HeadOutput` with any of:

* ``advantages`` — reshaped per-token advantages that replace ``A`` inside the GRPO loss ``L0``;
* ``aux_loss`` — a scalar added to ``L0``;
* ``replace_loss`` — a scalar that replaces ``L0`` entirely.

Loss composition (``baselines/learner.py``), per micro-batch, with ``w`` the micro-batch's share
of the batch's tokens::

    loss = −c_H·H·w + (replace_loss            if set
                       else L0(A')·w + aux_loss)  + c_KL·KL·w

where ``A'`` is ``advantages`` if set, else ``A``; ``aux_loss`` may come with ``advantages``.
A head returns ``replace_loss`` or ``aux_loss``, never both (:class:`HeadOutput` raises: one
would be dropped). The entropy and KL terms always stay, with the head's own ``entropy_coef`` /
``kl_coef`` when it sets them. A ``"batch"``-scope head returns ``advantages`` only (the learner
raises on a loss from one).

Each head says *when* it runs (:attr:`Head.scope`):

* ``"batch"`` — advantage-reshaping heads (``rlsd``, ``agentopsd``, ``opid``): called **once on
  the whole rollout batch** before any gradient step, with ``student_logprobs`` equal to the
  pre-update (old) log-probs, as the references compute advantages once per batch;
* ``"micro_batch"`` — loss heads: called per training micro-batch with the student's log-probs
  (and logits) carrying gradients. Their loss terms are sums over the micro-batch divided by the
  whole batch's token (or row) total in :attr:`HeadBatch.totals`, so the gradient of one step does
  not depend on ``micro_batch_size``.

Rows without a teacher context (``has_teacher`` False) contribute nothing to any teacher term:
:func:`teacher_gap` is 0 there and :meth:`Head.term_mask` drops them.

Notation (METHODS.md): ``s_t`` student log-prob with grad, ``q_t`` teacher log-prob (no grad) on
the prompt plus privileged context, ``o_t`` rollout log-prob, ``δ_t = stopgrad(q_t − s_t)``,
``A`` the GRPO advantage. A head declares which teacher weights it wants (``current`` weights
without grad, the ``frozen`` initial policy, or an ``ema`` of the policy), which context
(``privileged`` text, per-task-type ``skills``, a successful ``sibling`` trajectory,
``hindsight`` notes, or an expert ``demonstration``), and whether it needs full logits. It also
states its reference recipe (:attr:`Head.reference`) so that every run records where it
deviates (:meth:`Head.deviations`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import torch

from agents.prompts import CONTEXT_BUDGET_CHARS
from baselines.grpo import masked_mean
from baselines.teacher import CONTEXT_KINDS

TEACHER_WEIGHTS: tuple[str, ...] = ("current", "frozen", "ema")
CONTEXT_SOURCES: tuple[str, ...] = CONTEXT_KINDS
"""The contexts a head may read: the context registry's (:data:`baselines.teacher.CONTEXTS`)."""
SCOPES: tuple[str, ...] = ("batch", "micro_batch")


@dataclass(frozen=True)
class LossTotals:
    """Denominators of the whole update batch (all micro-batches, all ranks).

    ``tokens``: masked response tokens; ``term_tokens`` / ``term_rows``: tokens and rows (with at
    least one token) of the head's :meth:`Head.term_mask`.
    """

    tokens: float
    term_tokens: float
    term_rows: float


@dataclass
class HeadBatch:
    """What a head sees (tensors are ``[rows, tokens]`` unless noted)."""

    student_logprobs: torch.Tensor
    old_logprobs: torch.Tensor
    advantages: torch.Tensor
    mask: torch.Tensor
    teacher_logprobs: torch.Tensor | None = None
    has_teacher: torch.Tensor | None = None
    """``[rows]`` bool: rows that have a teacher context (None: every row has one)."""
    student_logits: torch.Tensor | None = None
    """``[rows, tokens, vocab]`` when the head sets ``needs_logits``."""
    teacher_logits: torch.Tensor | None = None
    group_ids: list[int] = field(default_factory=list)
    traj_ids: list[int] = field(default_factory=list)
    turn_ids: list[int] = field(default_factory=list)
    won: list[bool] = field(default_factory=list)
    group_success_rate: list[float] = field(default_factory=list)
    """Per row: the share of its group's episodes that were won (AgentOPSD's V0, paper)."""
    group_mean_return: list[float] = field(default_factory=list)
    """Per row: the mean training return of its group's rows (AgentOPSD's V0, reference code)."""
    step: int = 0
    totals: LossTotals | None = None
    """Whole-batch denominators; None: this batch is the whole batch."""


@dataclass
class HeadOutput:
    """A head's contribution (any field may be None) and its diagnostics."""

    advantages: torch.Tensor | None = None
    aux_loss: torch.Tensor | None = None
    replace_loss: torch.Tensor | None = None
    metrics: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.replace_loss is not None and self.aux_loss is not None:
            raise ValueError("a head returns replace_loss or aux_loss, not both (replace_loss "
                             "replaces L0, so an aux_loss added to L0 would be dropped)")


@dataclass(kw_only=True)
class Head:
    """Base class of every head (the contract in the module docstring). A subclass is itself a
    ``@dataclass(kw_only=True)``: it sets :attr:`name`, its reference :attr:`source` and
    :attr:`reference` recipe and :meth:`apply`, declares its knobs as fields (each with a
    docstring; a base knob is redeclared to change its default) and checks their values in
    ``__post_init__`` (calling ``super().__post_init__()`` first). :meth:`config` is the head's
    name and scope plus every knob; state a head keeps for itself is a ``field(init=False)``,
    which is not a knob and not in :meth:`config`."""

    name: ClassVar[str] = ""
    row: ClassVar[int | None] = None
    """Where a head sdgym ships stands in its tables and in a benchmark preset's
    ``methods = "all"`` (GRPO is row 0); ``None`` for a head from another package."""
    needs_teacher: ClassVar[bool] = False
    needs_logits: ClassVar[bool] = False
    scope: ClassVar[str] = "micro_batch"
    replaces_loss: ClassVar[bool] = False
    """Whether the head's default output replaces the GRPO loss ``L0`` (else adds to it)."""
    source: ClassVar[str] = ""
    """The reference code (repository and file) this head must match."""
    reference: ClassVar[dict[str, Any]] = {}
    """The reference recipe's value of each knob (head attributes, and trainer options by their
    dotted path: ``"grpo.lr"``, ``"rollout.temperature"``, ``"grpo.kl_coef"``…);
    :meth:`deviations` compares against it."""
    notes: ClassVar[tuple[str, ...]] = ()
    """Fixed differences from the reference that no knob removes (recorded in every run)."""

    teacher_weights: str = "frozen"
    """Weights that score the teacher prompt: ``current`` (the policy's, without grad),
    ``frozen`` (the initial policy) or ``ema`` (a moving average of the policy)."""
    context: str = "privileged"
    """What the teacher reads besides the prompt (:data:`CONTEXT_SOURCES`): ``privileged`` text,
    per-task-type ``skills``, a successful ``sibling``, ``hindsight`` notes or an expert
    ``demonstration``."""
    ema_decay: float = 0.05
    """Update rate ``α`` of the ``ema`` teacher after each step: ``θ_T ← (1 − α)·θ_T + α·θ``."""
    context_budget_chars: int = CONTEXT_BUDGET_CHARS
    """Character budget of the context block of the teacher prompt."""
    entropy_coef: float | None = None
    """Entropy-bonus coefficient for this head (None: the GRPO config's)."""
    kl_coef: float | None = None
    """KL-to-reference coefficient for this head (None: the GRPO config's)."""

    def __post_init__(self) -> None:
        if self.teacher_weights not in TEACHER_WEIGHTS:
            raise ValueError(f"teacher_weights must be one of {TEACHER_WEIGHTS}")
        if self.context not in CONTEXT_SOURCES:
            raise ValueError(f"context must be one of {CONTEXT_SOURCES}")

    def knobs(self) -> dict[str, Any]:
        """This head's knobs (:func:`knob_names`) and their values, in declaration order."""
        return {name: getattr(self, name) for name in knob_names(type(self))}

    def config(self) -> dict[str, Any]:
        """Everything that defines this head's behaviour, recorded in every run: name, scope and
        every knob (the teacher's weights and context ``None`` for a head without a teacher)."""
        knobs = self.knobs()
        teacher = self.needs_teacher
        first = {
            "name": self.name,
            "scope": self.scope,
            "teacher_weights": knobs["teacher_weights"] if teacher else None,
            "context": knobs["context"] if teacher else None,
            "ema_decay": knobs["ema_decay"],
            "context_budget_chars": knobs["context_budget_chars"],
        }
        return {**first, **{k: v for k, v in knobs.items() if k not in first}}

    def deviations(self, train: dict[str, Any] | None = None) -> list[str]:
        """Where this run differs from the head's reference recipe, one line each.

        ``train`` is the training config as plain data (:meth:`TrainConfig.to_dict`); trainer
        options named in :attr:`reference` are read from it, the head's own from ``self``.
        """
        lines = list(self.notes)
        mine = self.config()
        for key, expected in self.reference.items():
            actual = _lookup(train or {}, key) if _is_trainer_key(key) else mine.get(key, _MISSING)
            if actual is _MISSING:
                continue
            if not _same(actual, expected):
                lines.append(f"{key} = {actual!r} (reference: {expected!r})")
        return lines

    def term_mask(self, mask: torch.Tensor, has_teacher: torch.Tensor | None) -> torch.Tensor:
        """Tokens this head's teacher term is defined on: ``mask`` of rows with a teacher."""
        return rows_with_teacher(mask, has_teacher)

    def wants_logits(self) -> bool:
        """Whether this head, as configured, needs full student and teacher logits."""
        return self.needs_logits

    def apply(self, batch: HeadBatch) -> HeadOutput:
        """Reshape advantages and/or add or replace the loss for this batch."""
        raise NotImplementedError(f"head {type(self).__name__} does not define apply()")


def knob_names(cls: type[Head]) -> tuple[str, ...]:
    """The knobs of head class ``cls``: its dataclass fields that are constructor arguments, in
    declaration order (base knobs first)."""
    return tuple(item.name for item in fields(cls) if item.init)


def is_declared_head(cls: object) -> bool:
    """Whether ``cls`` is a :class:`Head` subclass declared with ``@dataclass`` itself (a plain
    subclass would keep knobs of its own out of :meth:`Head.config`)."""
    return (isinstance(cls, type) and issubclass(cls, Head)
            and "__dataclass_fields__" in cls.__dict__)


_MISSING = object()


def _is_trainer_key(key: str) -> bool:
    """A trainer option is named by its dotted path in the training config (``"grpo.lr"``)."""
    return "." in key


def _lookup(values: dict[str, Any], key: str) -> Any:
    for part in key.split("."):
        if not isinstance(values, dict) or part not in values:
            return _MISSING
        values = values[part]
    return values


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(actual, (int, float)) and isinstance(expected, (int, float)) \
            and not isinstance(actual, bool) and not isinstance(expected, bool):
        return math.isclose(float(actual), float(expected), rel_tol=1e-9, abs_tol=1e-12)
    return actual == expected


# --- shared helpers for the teacher heads (one formula, one place) ---------------------------


def masked_float(values: torch.Tensor, mask: torch.Tensor) -> float:
    """:func:`masked_mean` of detached ``values`` as a Python float (for metrics)."""
    return float(masked_mean(values.detach().float(), mask))


def require(tensor: torch.Tensor | None, what: str, head: str) -> torch.Tensor:
    """Return ``tensor`` detached, or raise a clear error naming the head that needs it."""
    if tensor is None:
        raise ValueError(f"head {head!r} needs batch.{what}")
    return tensor.detach()


def rows_with_teacher(mask: torch.Tensor, has_teacher: torch.Tensor | None) -> torch.Tensor:
    """``[rows, tokens]`` float: ``mask`` restricted to rows with a teacher context (``has_teacher``
    None: every row has one)."""
    mask = mask.float()
    if has_teacher is None:
        return mask
    return mask * has_teacher.to(mask.device).float().unsqueeze(-1)


def teacher_rows(batch: HeadBatch) -> torch.Tensor:
    """``batch.mask`` restricted to rows with a teacher context (:func:`rows_with_teacher`)."""
    return rows_with_teacher(batch.mask, batch.has_teacher)


def teacher_gap(batch: HeadBatch, head: str, source: str = "student") -> torch.Tensor:
    """``δ_t = stopgrad(q_t − s_t)``; 0 on masked tokens and on rows without a teacher context
    (``source="old"``: ``o_t`` for ``s_t``)."""
    teacher = require(batch.teacher_logprobs, "teacher_logprobs", head)
    if source not in ("student", "old"):
        raise ValueError(f"gap source must be 'student' or 'old', got {source!r}")
    student = batch.student_logprobs if source == "student" else batch.old_logprobs
    gap = teacher - student.detach()
    return torch.where(teacher_rows(batch).bool(), gap, torch.zeros_like(gap))


def term_mean(values: torch.Tensor, mask: torch.Tensor, batch: HeadBatch) -> torch.Tensor:
    """``Σ values·mask / N`` with ``N`` the whole batch's term tokens (this batch's if unknown).

    Summed over micro-batches this is the token-mean over the whole batch, whatever the split.
    """
    mask = mask.to(values.dtype)
    total = batch.totals.term_tokens if batch.totals is not None else float(mask.sum())
    return (values * mask).sum() / max(total, 1.0)


def gated_distillation_term(
    batch: HeadBatch, gate: torch.Tensor, head: str, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, dict[str, float]]:
    """``mean_t g_t·(q_t − s_t)`` over teacher-row tokens, gate and teacher detached.

    The gradient w.r.t. ``s_t`` is ``−g_t / N``: descent raises the student's log-prob of
    the sampled token, most where the teacher prefers it (large gate). Rows without a teacher
    context are not in the mean.
    """
    teacher = require(batch.teacher_logprobs, "teacher_logprobs", head)
    mask = teacher_rows(batch) if mask is None else mask
    gate = gate.detach()
    gap = teacher - batch.student_logprobs.detach()
    per_token = gate * (teacher - batch.student_logprobs)
    loss = term_mean(per_token, mask, batch)
    metrics = {
        f"{head}/loss": masked_float(per_token, mask),
        f"{head}/gate_mean": masked_float(gate, mask),
        f"{head}/gate_active": masked_float((gate > 0.5).float(), mask),
        f"{head}/teacher_gap_mean": masked_float(gap, mask),
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


def categorical_kl(log_p: torch.Tensor, log_q: torch.Tensor) -> torch.Tensor:
    """``KL(p‖q) = Σ_v p_v (log p_v − log q_v)`` over the last axis (inputs are log-probs)."""
    p = log_p.exp()
    terms = torch.where(p > 0, p * (log_p - log_q), torch.zeros_like(p))
    return terms.sum(dim=-1)


def generalized_jsd(student: torch.Tensor, teacher: torch.Tensor, beta: float) -> torch.Tensor:
    """``β·KL(T‖M) + (1−β)·KL(S‖M)`` with ``M = (1−β)·S + β·T`` over the last axis (log-probs).

    ``β = 0`` / ``β = 1`` are special-cased to KL(T‖S) / KL(S‖T), as in the OPSD and SDPO code
    (TRL GKD's convention); ``β = 0.5`` is the Jensen–Shannon divergence.
    """
    if beta <= 0.0:
        return categorical_kl(teacher, student)
    if beta >= 1.0:
        return categorical_kl(student, teacher)
    mixture = torch.logaddexp(student + math.log(1.0 - beta), teacher + math.log(beta))
    return beta * categorical_kl(teacher, mixture) + (1.0 - beta) * categorical_kl(
        student, mixture)
