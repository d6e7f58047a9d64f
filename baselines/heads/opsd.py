"""OPSD: the SDAR gated distillation term on its own, replacing the policy-gradient loss.

Formula (METHODS.md)::

    L = c · mean_t σ(β·δ_t)·(q_t − s_t),   δ_t = stopgrad(q_t − s_t), gate detached; no L0

Defaults: c = 0.01, β = 5 (the reference recipe ``examples/opsd_trainer``: SDAR loss with
``pg_loss_coef=0``). Note: that recipe still adds the KL-to-reference loss; with
``replace_loss`` whether KL/entropy terms remain is the trainer's choice.
Context: ``skills`` (``privileged`` expert info is the alternative). Teacher weights:
``current`` (the reference recipe), see :mod:`baselines.heads.sdar`.
Source: arXiv 2601.18734; agentic port ref ZJU-REAL/SDAR ``examples/opsd_trainer`` +
``sdar_utils.py``. Not inferred.
"""

from __future__ import annotations

from baselines.heads import register_head
from baselines.heads.sdar import SDARHead


@register_head
class OPSDHead(SDARHead):
    """SDAR's gated term as the whole loss (no GRPO term)."""

    name = "opsd"
    replaces_loss = True
