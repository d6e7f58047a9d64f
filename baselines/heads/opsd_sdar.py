"""OPSD as SDAR re-implements it: the SDAR gated term on its own, replacing the PG loss.

This is **SDAR's port**, not the OPSD authors' objective (that is :mod:`baselines.heads.opsd`)::

    L = c · mean_t σ(β·δ_t)·(q_t − s_t),   δ_t = stopgrad(q_t − s_t), gate detached; no L0

Its per-sample gradient ``−c·σ(βδ_t)·∇s_t`` raises every sampled token (by ``c/2`` where teacher
and student agree); only through the softmax normalisation, averaged over on-policy samples, does
it lower tokens the teacher dislikes.

Defaults: c = 0.01, β = 5, the recipe ``examples/opsd_trainer``: SDAR loss with
``pg_loss_coef=0``, KL-to-reference 0.01 and entropy 0.001 kept (the trainer's GRPO config),
lr 1e-6, ``current`` teacher. Context: ``skills``.
Source: ZJU-REAL/SDAR ``examples/opsd_trainer`` + ``verl/trainer/ppo/sdar_utils.py``, porting
arXiv 2601.18734. Not inferred.
"""

from __future__ import annotations

from dataclasses import dataclass

from baselines.heads import register_head
from baselines.heads.sdar import SDARHead


@register_head
@dataclass(kw_only=True)
class OPSDSDARHead(SDARHead):
    """SDAR's gated term as the whole loss (no GRPO term)."""

    name = "opsd_sdar"
    row = 2
    source = "ZJU-REAL/SDAR `examples/opsd_trainer` (SDAR's port of arXiv 2601.18734)"
    replaces_loss = True
