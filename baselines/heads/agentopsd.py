"""AgentOPSD: turn-level advantage reshaping from a Bayesian success-belief recursion.

Formula (METHODS.md), per episode (rows sharing ``traj_ids``, ordered by ``turn_ids``)::

    Δ_k      = Σ_{t ∈ turn k} δ_t                      δ_t = stopgrad(q_t − o_t), masked
    V0       = clamp(v0 statistic of the group, 1e-4, 1 − 1e-4)
    logit V_k = logit V0 + Σ_{j ≤ k} Δ_j,  V_k clamped to (eps, 1 − eps),  V_{−1} = V0
    u_k      = V_k − V_{k−1}
    z_k      = (u_k − mean_k u) / (std_k u + eps)      population std within the episode;
                                                       a one-turn episode has z = 0
    m_k      = clip(1 + b·sign(A_k)·z_k, 1 − b, 1 + b)
    Â_k      = A_k·[(1 − λ) + λ·m_k]                  broadcast to the turn's masked tokens

``A_k`` is the row's GRPO advantage (its value at the first unmasked token). Turns whose belief
moved with the outcome are amplified, the others shrunk; the sign of ``A`` is kept. Rows without a
teacher context keep ``m_k = 1`` and are left out of the recursion and of the z-scores.

Scope ``batch``: the recursion and z-scores run over whole episodes, so the head runs once on
the whole rollout batch (never per micro-batch).
Defaults: b = 0.2, λ = 0.5 **constant** (the reference recipe's ``warmdown_steps=-1``;
``warmdown_steps > 0`` decays it linearly), eps = 1e-6, ``gap_source="old"`` (reference).
``v0``: ``"success_rate"`` (default; the paper's description: the share of the group's episodes
won) or ``"group_return"`` (the reference code: the clamped group mean of the row return
10·won, which saturates at 1 − 1e-4 as soon as one episode of the group is won) — the default
differs from the reference code and every run records it.
Context: ``skills``. Teacher weights: ``current`` (reference: same self-oracle as RLSD).
Source: arXiv 2608.05987; ref ZethWang/AgentOPSD ``verl/trainer/ppo/opsd_utils.py``
(``compute_opsd_turn_advantage``, belief_mult + signed). Not inferred.
"""

from __future__ import annotations

from collections import defaultdict
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
    row_values,
    teacher_gap,
)

V0_SOURCES = ("success_rate", "group_return")


@register_head
@dataclass(kw_only=True)
class AgentOPSDHead(Head):
    """Per-turn multiplicative credit from the z-scored belief increments."""

    name = "agentopsd"
    row = 7
    source = "ZethWang/AgentOPSD `opsd_utils.py` (arXiv 2608.05987)"
    needs_teacher = True
    scope = "batch"
    reference: ClassVar[dict[str, Any]] = {
        "band": 0.2, "lam": 0.5, "warmdown_steps": 0, "gap_source": "old",
        "v0": "group_return", "teacher_weights": "current"}

    band: float = 0.2
    """``b``: the turn multiplier ``m_k`` stays within ``[1 − b, 1 + b]``."""
    lam: float = 0.5
    """``λ``: the share of the reshaped advantage."""
    warmdown_steps: int = 0
    """Steps over which ``λ`` decays linearly to 0 (<= 0: constant, the reference recipe)."""
    eps: float = 1e-6
    """Clamp of the beliefs ``V_k`` to ``(eps, 1 − eps)`` and the z-score's stabiliser."""
    gap_source: str = "old"
    """``δ_t`` from the rollout log-probs (``old``, the reference) or the pre-update re-scored
    ones (``student``)."""
    v0: str = "success_rate"
    """Prior ``V0``: the share of the group's episodes won (``success_rate``, the paper) or the
    clamped group mean return (``group_return``, the reference code)."""
    teacher_weights: str = "current"
    """The reference's (the same self-oracle as RLSD)."""
    context: str = "skills"
    """Per-task-type guidance."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.v0 not in V0_SOURCES:
            raise ValueError(f"agentopsd v0 must be one of {V0_SOURCES}, got {self.v0!r}")

    def _prior(self, batch: HeadBatch, row: int) -> float:
        values = batch.group_success_rate if self.v0 == "success_rate" else batch.group_mean_return
        if len(values) != len(batch.traj_ids):
            raise ValueError(f"agentopsd (v0={self.v0!r}) needs "
                             f"{'group_success_rate' if self.v0 == 'success_rate' else 'group_mean_return'}"
                             " for every row")
        return min(max(float(values[row]), 1e-4), 1.0 - 1e-4)

    def turn_multipliers(self, batch: HeadBatch) -> torch.Tensor:
        """``m_k`` per row (turn), from the belief recursion within each episode."""
        turn_gap = teacher_gap(batch, self.name, self.gap_source).sum(dim=-1)
        row_adv = row_values(batch.advantages.detach(), batch.mask)
        rows = len(batch.traj_ids)
        if rows != turn_gap.shape[0] or len(batch.turn_ids) != rows:
            raise ValueError("agentopsd needs traj_ids and turn_ids for every row")
        has = (batch.has_teacher.tolist() if batch.has_teacher is not None else [True] * rows)
        episodes: dict[int, list[int]] = defaultdict(list)
        for row, traj in enumerate(batch.traj_ids):
            if has[row]:  # turns without a teacher context are not in the recursion or z-scores
                episodes[int(traj)].append(row)
        multipliers = torch.ones_like(turn_gap)
        for members in episodes.values():
            order = torch.tensor(sorted(members, key=lambda r: int(batch.turn_ids[r])))
            v0_tensor = torch.tensor([self._prior(batch, int(order[0]))], dtype=turn_gap.dtype,
                                     device=turn_gap.device)
            belief = torch.sigmoid(torch.logit(v0_tensor) + turn_gap[order].cumsum(0))
            belief = belief.clamp(self.eps, 1.0 - self.eps)
            previous = torch.cat([v0_tensor, belief[:-1]])
            increment = belief - previous
            z = (increment - increment.mean()) / (increment.std(unbiased=False) + self.eps)
            signed = 1.0 + self.band * torch.sign(row_adv[order]) * z
            multipliers[order] = signed.clamp(1.0 - self.band, 1.0 + self.band)
        return multipliers

    def apply(self, batch: HeadBatch) -> HeadOutput:
        lam = linear_warmdown(self.lam, batch.step, self.warmdown_steps)
        multipliers = self.turn_multipliers(batch)
        factor = (1.0 - lam) + lam * multipliers
        row_adv = row_values(batch.advantages.detach(), batch.mask)
        mask = batch.mask.to(row_adv.dtype)
        reshaped = (row_adv * factor).unsqueeze(-1) * mask
        has_tokens = mask.sum(dim=-1) > 0
        metrics = {
            f"{self.name}/lambda": lam,
            f"{self.name}/multiplier_mean": masked_float(multipliers, has_tokens),
            f"{self.name}/factor_mean": masked_float(factor, has_tokens),
            f"{self.name}/episodes": float(len(set(batch.traj_ids))),
        }
        return HeadOutput(advantages=reshaped, metrics=metrics)
