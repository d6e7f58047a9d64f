"""OPID: GRPO advantage plus an episode-level hindsight-skill teacher bonus.

Formula (METHODS.md, episode-level channel)::

    Â_t = A_t + w_e·stopgrad(q^ep_t − o_t)·[critical step]      (zero on masked tokens)

``q^ep`` is the teacher log-prob with an episode-level hindsight skill (``context="hindsight"``:
notes summarised from the group's finished episodes). A row is a critical step when it has such a
skill — the reference sets ``critical_step_mask`` to the rows of trajectories whose analysis
produced an episode skill — so rows without a teacher context get no bonus.

**The step-level channel is not implemented.** The reference adds
``w_s·stopgrad(q^step_t − o_t)·[step skill]`` where an external analyser LLM writes one
step-level skill per trajectory (``analysis_max_step_skills_per_traj=1``, ``w_s = 0.001`` in its
recipes). sdgym writes hindsight notes from the policy's own outcomes, without an analyser, and
has no step-level skill to score, so there is no ``step_weight`` knob; every run records this
deviation.

Scope ``batch``: computed once on the whole rollout batch, as the reference's advantage step.
Defaults: w_e = 0.001 (the reference recipes; its function default is 1.0); entropy bonus 0 and
the KL-to-reference of the trainer's GRPO config (the recipes: 0.01, 0.001 on search). The
reference normalises advantages ``mean_std_norm``, which is the GRPO core's episode
normalisation; its optional teacher-bonus normalisation/clipping (off in its recipes) is not
implemented. Teacher weights: ``current`` (the reference scores enhanced prompts with the actor
at rollout time).
Source: arXiv 2606.26790; ref jinyangwu/OPID ``gigpo/core_gigpo.py``
(``compute_opid_advantage_components``, ``compute_teacher_token_advantage``) and
``ray_trainer._prepare_opid_teacher_signals``. Not inferred.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from baselines.heads import register_head
from baselines.heads.base import (
    Head,
    HeadBatch,
    HeadOutput,
    masked_float,
    teacher_gap,
    teacher_rows,
)


@register_head
@dataclass(kw_only=True)
class OPIDHead(Head):
    """Additive advantage bonus from an episode-level hindsight teacher."""

    name = "opid"
    row = 9
    source = "jinyangwu/OPID `gigpo/core_gigpo.py` (arXiv 2606.26790)"
    needs_teacher = True
    scope = "batch"
    reference: ClassVar[dict[str, Any]] = {
        "episode_weight": 0.001, "teacher_weights": "current", "entropy_coef": 0.0}
    notes: ClassVar[tuple[str, ...]] = (
        "step-level skill teacher (reference w_s = 0.001, skills from an external analyser LLM) "
        "not implemented",
        "hindsight skills written from the policy's own outcomes, not by an analyser LLM",
    )

    episode_weight: float = 0.001
    """``w_e``: weight of the episode-level teacher bonus (the reference recipes)."""
    teacher_weights: str = "current"
    """The reference scores enhanced prompts with the actor at rollout time."""
    context: str = "hindsight"
    """Notes summarised from the group's finished episodes."""
    entropy_coef: float | None = 0.0
    """No entropy bonus (the reference recipes)."""

    def apply(self, batch: HeadBatch) -> HeadOutput:
        bonus = self.episode_weight * teacher_gap(batch, self.name, source="old")
        mask = batch.mask.to(bonus.dtype)
        reshaped = (batch.advantages.detach() + bonus) * mask
        critical = teacher_rows(batch)
        metrics = {
            f"{self.name}/episode_bonus_mean": masked_float(bonus, critical),
            f"{self.name}/bonus_abs_mean": masked_float(bonus.abs(), critical),
            f"{self.name}/critical_fraction": masked_float(critical, mask),
        }
        return HeadOutput(advantages=reshaped, metrics=metrics)
