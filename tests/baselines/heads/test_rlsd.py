"""rlsd: sign-aware clipped ratio reshaping and the linear λ warm-down, by hand."""

from __future__ import annotations

import math

import pytest
import torch

from baselines.heads import make_head
from baselines.heads.base import HeadBatch

# row 0 won (A = +1.5), row 1 lost (A = −2); row 1's last token is masked
MASK = [[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]
STUDENT = [[-1.0, -2.0, -0.5], [-1.5, -0.2, -3.0]]
GAPS = [[0.1, -0.5, 0.0], [0.1, -0.05, 9.0]]  # δ = q − s
ADV = [1.5, -2.0]


def toy_batch(step: int, old_shift: float = 0.0) -> HeadBatch:
    student = torch.tensor(STUDENT, requires_grad=True)
    teacher = torch.tensor(STUDENT) + torch.tensor(GAPS)
    return HeadBatch(
        student_logprobs=student,
        old_logprobs=student.detach() + old_shift,
        advantages=torch.tensor(ADV).unsqueeze(-1).expand(2, 3).clone(),
        mask=torch.tensor(MASK),
        teacher_logprobs=teacher,
        step=step,
    )


def expected(lam: float, shift: float = 0.0) -> list[list[float]]:
    out = []
    for row, adv in enumerate(ADV):
        sign = 1.0 if adv > 0 else -1.0
        values = []
        for t in range(3):
            weight = min(max(math.exp(sign * (GAPS[row][t] - shift)), 0.8), 1.2)
            values.append(adv * ((1 - lam) + lam * weight) * MASK[row][t])
        out.append(values)
    return out


def test_rlsd_factor_by_hand_at_step_zero() -> None:
    out = make_head("rlsd").apply(toy_batch(step=0))
    assert out.aux_loss is None and out.replace_loss is None and out.advantages is not None
    # written out: A>0 uses exp(+δ): e^0.1 = 1.10517 (inside the clip), e^−0.5 → 0.8, e^0 = 1;
    # A<0 uses exp(−δ): e^−0.1 = 0.904837, e^0.05 = 1.051271; the masked token gets 0
    by_hand = [
        [1.5 * (0.5 + 0.5 * math.exp(0.1)), 1.5 * (0.5 + 0.5 * 0.8), 1.5],
        [-2.0 * (0.5 + 0.5 * math.exp(-0.1)), -2.0 * (0.5 + 0.5 * math.exp(0.05)), 0.0],
    ]
    assert out.advantages.tolist() == [pytest.approx(r, rel=1e-6) for r in by_hand]
    assert not out.advantages.requires_grad
    # sign is preserved; for the losing row the token the teacher likes less is blamed more
    assert out.advantages[1, 1] < out.advantages[1, 0] < 0
    assert out.metrics["rlsd/lambda"] == 0.5


@pytest.mark.parametrize(("step", "lam"), [(0, 0.5), (50, 0.25), (100, 0.0), (150, 0.0)])
def test_rlsd_lambda_schedule(step: int, lam: float) -> None:
    out = make_head("rlsd").apply(toy_batch(step=step))
    assert out.metrics["rlsd/lambda"] == pytest.approx(lam)
    assert out.advantages is not None
    assert out.advantages.tolist() == [pytest.approx(r, rel=1e-6) for r in expected(lam)]
    if lam == 0.0:  # plain GRPO advantages (masked token zeroed)
        assert out.advantages.tolist() == [[1.5, 1.5, 1.5], [-2.0, -2.0, 0.0]]


def test_rlsd_gap_source_old_uses_rollout_logprobs() -> None:
    out = make_head("rlsd", gap_source="old").apply(toy_batch(step=0, old_shift=0.05))
    assert out.advantages is not None
    assert out.advantages.tolist() == [pytest.approx(r, rel=1e-6) for r in expected(0.5, 0.05)]
