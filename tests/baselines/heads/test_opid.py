"""opid: the episode-level hindsight teacher bonus added to A, by hand (reference formula)."""

from __future__ import annotations

import pytest
import torch

from baselines.heads import make_head
from baselines.heads.base import HeadBatch

MASK = [[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]
OLD = [[-1.0, -2.0, -0.5], [-1.5, -0.2, -3.0]]
EPISODE = [[-0.5, -2.5, -0.5], [-1.0, -1.2, 40.0]]  # q^ep (row 1's last token is masked)
ADV = [1.5, -2.0]


def toy_batch(has_teacher: list[bool] | None = None, with_teacher: bool = True) -> HeadBatch:
    student = torch.tensor(OLD, requires_grad=True)
    return HeadBatch(
        student_logprobs=student,
        old_logprobs=torch.tensor(OLD),
        advantages=torch.tensor(ADV).unsqueeze(-1).expand(2, 3).clone(),
        mask=torch.tensor(MASK),
        teacher_logprobs=torch.tensor(EPISODE) if with_teacher else None,
        has_teacher=None if has_teacher is None else torch.tensor(has_teacher),
    )


def test_opid_episode_bonus_by_hand() -> None:
    out = make_head("opid", episode_weight=0.1).apply(toy_batch())
    # Â = A + w_e·(q^ep − o) on every unmasked token of a critical (teacher) row
    by_hand = [
        [1.5 + 0.1 * 0.5, 1.5 + 0.1 * -0.5, 1.5],
        [-2.0 + 0.1 * 0.5, -2.0 + 0.1 * -1.0, 0.0],
    ]
    assert out.advantages is not None and not out.advantages.requires_grad
    assert out.advantages.tolist() == [pytest.approx(r, rel=1e-6) for r in by_hand]
    assert out.metrics["opid/critical_fraction"] == 1.0


def test_opid_rows_without_hindsight_are_not_critical() -> None:
    out = make_head("opid").apply(toy_batch(has_teacher=[True, False]))
    w = 0.001
    assert out.advantages is not None
    assert out.advantages.tolist() == [
        pytest.approx([1.5 + w * 0.5, 1.5 + w * -0.5, 1.5], rel=1e-6), [-2.0, -2.0, 0.0]]


def test_opid_has_no_step_channel_and_records_it() -> None:
    head = make_head("opid")
    assert head.scope == "batch" and head.episode_weight == 0.001
    with pytest.raises(TypeError):
        make_head("opid", step_weight=0.001)  # a knob that did nothing is gone
    assert any("step-level" in line for line in head.deviations({}))


def test_opid_needs_teacher_logprobs() -> None:
    with pytest.raises(ValueError, match="teacher_logprobs"):
        make_head("opid").apply(toy_batch(with_teacher=False))
