"""PCSD: GRPO plus self-distillation gated by the *persistence* of the teacher's preference.

*Inferred* — only the abstract of arXiv 2608.01837 is public and no code was released; this
implements the form stated in METHODS.md with every knob configurable::

    δ_t = stopgrad(q_t − s_t)   (0 on masked tokens)
    p_t = Σ_{j ∈ W_t} γ^{t−j}·δ_j          W_t = the last `window` positions up to t in the row
    p̃_t = p_t·(1 − κ·[p_t < p_{t−1}])      (no penalty at the row's first position)
    w_t = stopgrad σ(β·p̃_t)
    L   = L0 + c · mean_t w_t·(q_t − s_t)    (token-mean over teacher rows)

"Adaptive window" is read as: the window is truncated at the start of the turn-row (fewer
than `window` terms for early tokens); masked positions add nothing to the sum but still
count as distance. A persistent positive gap opens the gate; a gap that is fading is damped
by κ.

Defaults: c = 0.01, β = 5, γ = 0.9, κ = 0.5, window = 8. Context: ``skills``. Teacher
weights: ``current`` — no reference exists; chosen to match the SDAR recipe it gates
(:mod:`baselines.heads.sdar`) so the persistence gate is the only difference;
``frozen`` is the safer switch for long runs.
Source: arXiv 2608.01837 (abstract only).
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
    masked_float,
    teacher_gap,
    teacher_rows,
)


@register_head
@dataclass(kw_only=True)
class PCSDHead(Head):
    """Additive distillation gated by a discounted, decay-penalised running gap."""

    name = "pcsd"
    row = 8
    source = "arXiv 2608.01837 abstract (inferred, no code)"
    needs_teacher = True
    reference: ClassVar[dict[str, Any]] = {
        "coef": 0.01, "beta": 5.0, "gamma": 0.9, "kappa": 0.5, "window": 8}
    notes: ClassVar[tuple[str, ...]] = (
        "inferred from the abstract of arXiv 2608.01837: no reference code exists",)

    coef: float = 0.01
    """``c``: weight of the gated distillation term."""
    beta: float = 5.0
    """``β``: sharpness of the gate ``σ(β·p̃_t)``."""
    gamma: float = 0.9
    """``γ``: discount of older gaps in the running sum ``p_t``."""
    kappa: float = 0.5
    """``κ``: damping of a fading running gap (``p_t < p_{t−1}``)."""
    window: int = 8
    """Positions summed into ``p_t`` (>= 1), truncated at the start of the row."""
    teacher_weights: str = "current"
    """Matches the SDAR recipe it gates (``frozen`` is the safer switch for long runs)."""
    context: str = "skills"
    """Per-task-type guidance."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.window < 1:
            raise ValueError("pcsd window must be >= 1")

    def persistence(self, delta: torch.Tensor) -> torch.Tensor:
        """``p̃_t`` for a ``[rows, tokens]`` gap (already zero on masked tokens)."""
        persistence = torch.zeros_like(delta)
        for lag in range(min(self.window, delta.shape[-1])):
            shifted = torch.nn.functional.pad(delta, (lag, 0))[..., : delta.shape[-1]]
            persistence = persistence + (self.gamma**lag) * shifted
        fading = torch.zeros_like(persistence, dtype=torch.bool)
        fading[..., 1:] = persistence[..., 1:] < persistence[..., :-1]
        return persistence * (1.0 - self.kappa * fading.to(persistence.dtype))

    def apply(self, batch: HeadBatch) -> HeadOutput:
        damped = self.persistence(teacher_gap(batch, self.name))
        term, metrics = gated_distillation_term(batch, torch.sigmoid(self.beta * damped), self.name)
        metrics[f"{self.name}/persistence_mean"] = masked_float(damped, teacher_rows(batch))
        return HeadOutput(aux_loss=self.coef * term, metrics=metrics)
