"""OPID: GRPO advantage plus hindsight-skill teacher bonuses (episode- and step-level).

Formula (METHODS.md)::

    Â_t = A_t + w_e·stopgrad(q^ep_t − o_t)·[critical step]_t
              + w_s·stopgrad(q^step_t − o_t)·[step skill]_t        (zero on masked tokens)

``q^ep`` is scored with an episode-level hindsight skill summarised from finished
trajectories, ``q^step`` with a step-level skill attached to critical steps. Inputs:

* ``batch.extra["teacher_logprobs_episode"]`` ``[rows, tokens]``, falling back to
  ``batch.teacher_logprobs`` (as the reference does);
* ``batch.extra["teacher_logprobs_step"]``; when absent the step term is 0 (reference);
* ``batch.extra["critical_step_mask"]`` / ``["step_skill_mask"]``: ``[rows]``, ``[rows, 1]``
  or ``[rows, tokens]`` 0/1; when absent every token counts (reference).

Defaults: w_e = w_s = 0.001 (the reference recipes; its function defaults are 1.0 and 0.0).
The reference's episode advantage uses GiGPO's mean-only normalisation; here ``A`` is whatever
the GRPO core produced. Its optional teacher-bonus normalisation/clipping (off in its recipes)
is not implemented. Context: ``hindsight`` notes written by the policy itself (an external
OpenAI-compatible analyser is the trainer's option). Teacher weights: ``current`` (the
reference scores enhanced prompts with the actor at rollout time).
Source: arXiv 2606.26790; ref jinyangwu/OPID ``gigpo/core_gigpo.py``
(``compute_opid_advantage_components``, ``compute_teacher_token_advantage``). Not inferred.
"""

from __future__ import annotations

from typing import Any

import torch

from baselines.heads import register_head
from baselines.heads.base import HeadBatch, HeadOutput, TeacherHead, masked_float


def _token_mask(value: Any, like: torch.Tensor) -> torch.Tensor:
    """Broadcast a ``[rows]``, ``[rows, 1]`` or ``[rows, tokens]`` mask (None: all ones)."""
    if value is None:
        return torch.ones_like(like)
    mask = torch.as_tensor(value, device=like.device).to(like.dtype)
    if mask.dim() == 1:
        mask = mask.unsqueeze(-1)
    return mask.expand_as(like)


@register_head
class OPIDHead(TeacherHead):
    """Additive advantage bonus from episode- and step-level hindsight teachers."""

    name = "opid"
    needs_teacher = True

    def __init__(
        self,
        episode_weight: float = 0.001,
        step_weight: float = 0.001,
        teacher_weights: str = "current",
        context: str = "hindsight",
        **kwargs: Any,
    ) -> None:
        super().__init__(teacher_weights=teacher_weights, context=context, **kwargs)
        self.episode_weight = episode_weight
        self.step_weight = step_weight

    def _bonus(
        self, teacher: torch.Tensor | None, mask_value: Any, batch: HeadBatch
    ) -> torch.Tensor:
        old = batch.old_logprobs.detach()
        if teacher is None:
            return torch.zeros_like(old)
        where = _token_mask(mask_value, old) * batch.mask.to(old.dtype)
        return (teacher.detach() - old) * where

    def apply(self, batch: HeadBatch) -> HeadOutput:
        episode_teacher = batch.extra.get("teacher_logprobs_episode", batch.teacher_logprobs)
        step_teacher = batch.extra.get("teacher_logprobs_step")
        if episode_teacher is None and step_teacher is None:
            raise ValueError("head 'opid' needs teacher_logprobs (or extra teacher_logprobs_*)")
        episode = self._bonus(episode_teacher, batch.extra.get("critical_step_mask"), batch)
        step = self._bonus(step_teacher, batch.extra.get("step_skill_mask"), batch)
        bonus = self.episode_weight * episode + self.step_weight * step
        mask = batch.mask.to(bonus.dtype)
        reshaped = (batch.advantages.detach() + bonus) * mask
        metrics = {
            f"{self.name}/episode_bonus_mean": masked_float(self.episode_weight * episode, mask),
            f"{self.name}/step_bonus_mean": masked_float(self.step_weight * step, mask),
            f"{self.name}/bonus_abs_mean": masked_float(bonus.abs(), mask),
            f"{self.name}/teacher_active": masked_float((bonus != 0).float(), mask),
        }
        return HeadOutput(advantages=reshaped, metrics=metrics)
