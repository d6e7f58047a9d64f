"""opsd, grpo_opsd, sdar, pcsd: the gated distillation family, checked against hand values.

Shared toy batch: 2 rows × 3 tokens, the last token of row 1 is masked (and carries a wild
teacher value that must not leak). Gaps δ = q − s: row 0 = (0.5, −0.5, 0), row 1 = (0.5, −0.8, ·).
"""

from __future__ import annotations

import math

import pytest
import torch

from baselines.heads import make_head
from baselines.heads.base import HeadBatch

MASK = [[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]
STUDENT = [[-1.0, -2.0, -0.5], [-1.5, -0.2, -3.0]]
TEACHER = [[-0.5, -2.5, -0.5], [-1.0, -1.0, 50.0]]
GAPS = [0.5, -0.5, 0.0, 0.5, -0.8]  # the five unmasked tokens, row-major
N = 5


def sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def toy_batch() -> HeadBatch:
    student = torch.tensor(STUDENT, requires_grad=True)
    return HeadBatch(
        student_logprobs=student,
        old_logprobs=student.detach().clone(),
        advantages=torch.zeros(2, 3),
        mask=torch.tensor(MASK),
        teacher_logprobs=torch.tensor(TEACHER, requires_grad=True),
    )


def grads(loss: torch.Tensor, batch: HeadBatch) -> list[float]:
    loss.backward()
    grad = batch.student_logprobs.grad
    assert batch.teacher_logprobs is not None and batch.teacher_logprobs.grad is None
    assert grad is not None and grad[1, 2] == 0.0  # masked token: no gradient
    return [
        float(g) for g, m in zip(grad.flatten(), torch.tensor(MASK).flatten(), strict=True) if m
    ]


def test_sdar_gated_aux_loss_and_gradient() -> None:
    batch = toy_batch()
    out = make_head("sdar").apply(batch)
    gates = [sig(5.0 * d) for d in GAPS]
    expected = 0.01 * sum(g * d for g, d in zip(gates, GAPS, strict=True)) / N
    assert out.replace_loss is None and out.advantages is None and out.aux_loss is not None
    assert out.aux_loss.item() == pytest.approx(expected, rel=1e-6)
    # the gate is detached: ∂L/∂s_t = −c·g_t/N exactly (no σ' term)
    assert grads(out.aux_loss, batch) == pytest.approx([-0.01 * g / N for g in gates], rel=1e-6)
    assert out.metrics["sdar/gate_mean"] == pytest.approx(sum(gates) / N, rel=1e-6)
    assert out.metrics["sdar/gate_active"] == pytest.approx(2 / N)
    assert out.metrics["sdar/teacher_gap_mean"] == pytest.approx(sum(GAPS) / N, rel=1e-6)


def test_opsd_sdar_replaces_loss_and_pushes_student_toward_teacher() -> None:
    batch = toy_batch()
    out = make_head("opsd_sdar").apply(batch)
    gates = [sig(5.0 * d) for d in GAPS]
    assert out.aux_loss is None and out.replace_loss is not None
    expected = 0.01 * sum(g * d for g, d in zip(gates, GAPS, strict=True)) / N
    assert out.replace_loss.item() == pytest.approx(expected, rel=1e-6)
    grad = grads(out.replace_loss, batch)
    assert grad == pytest.approx([-0.01 * g / N for g in gates], rel=1e-6)
    # a descent step raises s_t; where the teacher prefers the token (δ > 0) it closes the gap,
    # and it does so far more strongly there than where δ < 0 (gate σ(2.5) vs σ(−2.5))
    step = [-g for g in grad]
    assert all(x > 0 for x in step)
    assert step[0] / step[1] == pytest.approx(sig(2.5) / sig(-2.5), rel=1e-6)


def test_grpo_opsd_constant_half_gate() -> None:
    batch = toy_batch()
    out = make_head("grpo_opsd", coef=0.02).apply(batch)
    assert out.aux_loss is not None
    assert out.aux_loss.item() == pytest.approx(0.02 * 0.5 * sum(GAPS) / N, rel=1e-6)
    assert grads(out.aux_loss, batch) == pytest.approx([-0.02 * 0.5 / N] * N, rel=1e-6)
    assert out.metrics["grpo_opsd/gate_mean"] == pytest.approx(0.5)


def pcsd_expected(window: int) -> list[float]:
    """p̃_t by hand for the toy rows (γ = 0.9, κ = 0.5), masked token's δ counted as 0."""
    rows = [[0.5, -0.5, 0.0], [0.5, -0.8, 0.0]]
    damped: list[float] = []
    for row in rows:
        p = [sum(0.9**lag * row[t - lag] for lag in range(min(window, t + 1))) for t in range(3)]
        for t in range(3):
            fading = t > 0 and p[t] < p[t - 1]
            damped.append(p[t] * (0.5 if fading else 1.0))
    return damped[:5]  # drop the masked token


@pytest.mark.parametrize("window", [8, 2, 1])
def test_pcsd_persistence_gate(window: int) -> None:
    batch = toy_batch()
    out = make_head("pcsd", window=window).apply(batch)
    damped = pcsd_expected(window)
    if window == 8:  # spelled out once: p = (0.5, −0.05, −0.045 | 0.5, −0.35)
        assert damped == pytest.approx([0.5, -0.025, -0.045, 0.5, -0.175])
    gates = [sig(5.0 * p) for p in damped]
    assert out.aux_loss is not None
    expected = 0.01 * sum(g * d for g, d in zip(gates, GAPS, strict=True)) / N
    assert out.aux_loss.item() == pytest.approx(expected, rel=1e-6)
    assert grads(out.aux_loss, batch) == pytest.approx([-0.01 * g / N for g in gates], rel=1e-6)
    assert out.metrics["pcsd/persistence_mean"] == pytest.approx(sum(damped) / N, rel=1e-6)


def test_gated_heads_need_teacher_logprobs() -> None:
    batch = toy_batch()
    batch.teacher_logprobs = None
    for name in ("opsd_sdar", "grpo_opsd", "sdar", "pcsd"):
        with pytest.raises(ValueError, match="teacher_logprobs"):
            make_head(name).apply(batch)
