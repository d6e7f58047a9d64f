"""skill_sd: ρ-weighted k3 loss, its gradient ρ·ℓ (hand-derived), and the ratio cap."""

from __future__ import annotations

import math

import pytest
import torch

from baselines.heads import make_head
from baselines.heads.base import HeadBatch

MASK = [[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]
STUDENT = [[-1.0, -2.0, -0.5], [-1.5, -0.2, -3.0]]
TEACHER = [[-0.5, -2.5, -0.5], [-1.0, -1.0, 50.0]]
OLD = [[-1.2, -2.0, -0.5], [-1.5, -11.2, -3.0]]  # row 1 token 1: s − o = 11 > cap 10


def test_skill_sd_loss_and_gradient_by_hand() -> None:
    student = torch.tensor(STUDENT, requires_grad=True)
    teacher = torch.tensor(TEACHER, requires_grad=True)
    batch = HeadBatch(
        student_logprobs=student,
        old_logprobs=torch.tensor(OLD),
        advantages=torch.zeros(2, 3),
        mask=torch.tensor(MASK),
        teacher_logprobs=teacher,
    )
    out = make_head("skill_sd").apply(batch)
    assert out.aux_loss is not None and out.replace_loss is None
    total, grad = 0.0, []
    for r in range(2):
        for t in range(3):
            if not MASK[r][t]:
                continue
            s, q, o = STUDENT[r][t], TEACHER[r][t], OLD[r][t]
            ell = s - q
            k3 = math.exp(-ell) - 1 + ell
            capped = s - o > 10
            rho = math.exp(min(s - o, 10))
            total += rho * k3
            # d/ds [ρ·k3] = ρ·k3 + ρ·(1 − e^{−ℓ}) = ρ·ℓ  (ρ constant past the cap)
            grad.append(0.001 * (rho * (1 - math.exp(-ell)) if capped else rho * ell) / 5)
    assert out.aux_loss.item() == pytest.approx(0.001 * total / 5, rel=1e-5)
    out.aux_loss.backward()
    assert teacher.grad is None
    assert student.grad is not None and student.grad[1, 2] == 0.0
    flat = [float(g) for g, m in zip(student.grad.flatten(), sum(MASK, []), strict=True) if m]
    assert flat == pytest.approx(grad, rel=1e-5)
    # descent moves s toward q from both sides: row 0 token 0 (s < q) up, token 1 (s > q) down
    assert student.grad[0, 0] < 0 < student.grad[0, 1]
    assert out.metrics["skill_sd/k3_kl_mean"] > 0
