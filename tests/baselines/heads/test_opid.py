"""opid: episode- and step-level hindsight teacher bonuses added to A, by hand."""

from __future__ import annotations

import pytest
import torch

from baselines.heads import make_head
from baselines.heads.base import HeadBatch

MASK = [[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]
OLD = [[-1.0, -2.0, -0.5], [-1.5, -0.2, -3.0]]
EPISODE = [[-0.5, -2.5, -0.5], [-1.0, -1.2, 40.0]]  # q^ep
STEP = [[-0.9, -1.0, 0.5], [-2.5, -0.2, 40.0]]  # q^step
ADV = [1.5, -2.0]


def toy_batch(extra: dict, with_teacher: bool = True) -> HeadBatch:
    student = torch.tensor(OLD, requires_grad=True)
    return HeadBatch(
        student_logprobs=student,
        old_logprobs=torch.tensor(OLD),
        advantages=torch.tensor(ADV).unsqueeze(-1).expand(2, 3).clone(),
        mask=torch.tensor(MASK),
        teacher_logprobs=torch.tensor(EPISODE) if with_teacher else None,
        extra=extra,
    )


def test_opid_episode_and_step_bonuses() -> None:
    extra = {
        "teacher_logprobs_step": torch.tensor(STEP),
        "critical_step_mask": [1.0, 0.0],  # per row: only row 0 is a critical step
        "step_skill_mask": torch.tensor([[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]]),
    }
    out = make_head("opid").apply(toy_batch(extra))
    w = 0.001
    # Â = A + w_e·(q^ep − o)·crit + w_s·(q^step − o)·skill, zero on the masked token
    by_hand = [
        [1.5 + w * 0.5, 1.5 + w * -0.5 + w * 1.0, 1.5 + w * 0.0 + w * 1.0],
        [-2.0 + w * -1.0, -2.0 + w * 0.0, 0.0],
    ]
    assert out.advantages is not None and not out.advantages.requires_grad
    assert out.advantages.tolist() == [pytest.approx(r, rel=1e-6) for r in by_hand]
    assert out.metrics["opid/episode_bonus_mean"] == pytest.approx(w * 0.0 / 5, abs=1e-9)
    assert out.metrics["opid/step_bonus_mean"] == pytest.approx(w * 1.0 / 5, rel=1e-5)


def test_opid_falls_back_to_teacher_logprobs_without_masks() -> None:
    out = make_head("opid", episode_weight=0.1).apply(toy_batch({}))
    # every unmasked token counts; no step teacher → no step term
    by_hand = [
        [1.5 + 0.1 * 0.5, 1.5 + 0.1 * -0.5, 1.5],
        [-2.0 + 0.1 * 0.5, -2.0 + 0.1 * -1.0, 0.0],
    ]
    assert out.advantages is not None
    assert out.advantages.tolist() == [pytest.approx(r, rel=1e-6) for r in by_hand]


def test_opid_needs_some_teacher() -> None:
    with pytest.raises(ValueError, match="teacher_logprobs"):
        make_head("opid").apply(toy_batch({}, with_teacher=False))
