"""sdpo and sdft: full-logit divergences checked against plain-Python probabilities."""

from __future__ import annotations

import math

import pytest
import torch
from distributions_by_hand import kl, softmax

from baselines.heads import make_head
from baselines.heads.base import HeadBatch

# 2 rows × 3 tokens × vocab 4; row 0's last token is masked
S_LOGITS = [
    [[2.0, 1.0, 0.0, -1.0], [0.5, 0.0, 1.5, -0.5], [9.0, 0.0, 0.0, 0.0]],
    [[1.0, 1.2, 0.0, 2.0], [0.0, -1.0, 0.3, 0.1], [0.2, 0.4, -0.6, 0.0]],
]
T_LOGITS = [
    [[0.0, 2.0, 1.0, -1.0], [1.0, 1.0, 0.0, 0.0], [-9.0, 0.0, 0.0, 0.0]],
    [[0.0, 0.5, 1.0, 0.0], [2.0, 0.0, 0.0, -2.0], [0.0, 0.0, 1.0, 0.0]],
]
MASK = [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
LOG_RATIO = [[1.0, 0.0, 0.0], [0.0, -0.5, 0.0]]  # s − o; e^1 is clipped to 2


def jsd_topk_tail(s_logits: list[float], t_logits: list[float], k: int) -> float:
    p, q = softmax(s_logits), softmax(t_logits)
    top = sorted(range(len(p)), key=lambda i: -p[i])[:k]  # the student's top-k
    ps = [p[i] for i in top] + [1 - sum(p[i] for i in top)]
    qs = [q[i] for i in top] + [1 - sum(q[i] for i in top)]
    m = [0.5 * a + 0.5 * b for a, b in zip(ps, qs, strict=True)]
    return 0.5 * kl(ps, m) + 0.5 * kl(qs, m)


def logit_batch(has_teacher: list[bool] | None = None) -> HeadBatch:
    student_lp = torch.full((2, 3), -1.0, requires_grad=True)
    return HeadBatch(
        student_logprobs=student_lp,
        old_logprobs=student_lp.detach() - torch.tensor(LOG_RATIO),
        advantages=torch.tensor([[1.0] * 3, [-1.0] * 3]),
        mask=torch.tensor(MASK),
        has_teacher=None if has_teacher is None else torch.tensor(has_teacher),
        student_logits=torch.tensor(S_LOGITS, requires_grad=True),
        teacher_logits=torch.tensor(T_LOGITS, requires_grad=True),
    )


def sdpo_by_hand(rows: list[int], k: int) -> float:
    terms = []
    for r in rows:
        for t in range(3):
            if MASK[r][t]:
                ratio = min(math.exp(LOG_RATIO[r][t]), 2.0)
                terms.append(ratio * jsd_topk_tail(S_LOGITS[r][t], T_LOGITS[r][t], k))
    return sum(terms) / len(terms)


def test_sdpo_topk_tail_jsd_only_on_teacher_rows() -> None:
    batch = logit_batch(has_teacher=[True, False])
    out = make_head("sdpo", topk=2).apply(batch)
    assert out.aux_loss is None and out.advantages is None and out.replace_loss is not None
    assert out.replace_loss.item() == pytest.approx(sdpo_by_hand([0], 2), rel=1e-5)
    out.replace_loss.backward()
    grad = batch.student_logits.grad
    assert grad is not None and batch.teacher_logits.grad is None
    assert torch.all(grad[1] == 0) and torch.all(grad[0, 2] == 0)  # no-teacher row, masked token
    assert out.metrics["sdpo/teacher_row_fraction"] == 0.5
    assert out.metrics["sdpo/is_ratio_mean"] == pytest.approx(1.5)  # (2 + 1) / 2


def test_sdpo_gradient_matches_finite_difference() -> None:
    batch = logit_batch()
    out = make_head("sdpo", topk=2).apply(batch)
    assert out.replace_loss is not None
    assert out.replace_loss.item() == pytest.approx(sdpo_by_hand([0, 1], 2), rel=1e-5)
    out.replace_loss.backward()
    assert batch.student_logits.grad is not None
    h = 1e-4
    for r, t, v in [(0, 0, 1), (1, 1, 3)]:
        original = S_LOGITS[r][t][v]
        S_LOGITS[r][t][v] = original + h
        up = sdpo_by_hand([0, 1], 2)
        S_LOGITS[r][t][v] = original - h
        down = sdpo_by_hand([0, 1], 2)
        S_LOGITS[r][t][v] = original
        numeric = (up - down) / (2 * h)
        assert float(batch.student_logits.grad[r, t, v]) == pytest.approx(numeric, abs=1e-5)


def test_sdpo_no_teacher_rows_fallbacks() -> None:
    empty = make_head("sdpo").apply(logit_batch(has_teacher=[False, False]))
    assert empty.replace_loss is not None and empty.replace_loss.item() == 0.0
    assert empty.metrics["sdpo/empty_target_batch"] == 1.0
    mixed = make_head("sdpo", topk=2, no_teacher_rows="grpo").apply(
        logit_batch(has_teacher=[True, False])
    )
    assert mixed.replace_loss is None and mixed.aux_loss is not None
    assert mixed.aux_loss.item() == pytest.approx(sdpo_by_hand([0], 2), rel=1e-5)
    assert mixed.advantages is not None
    assert mixed.advantages.tolist() == [[0.0] * 3, [-1.0] * 3]  # GRPO kept on row 1 only


def test_sdpo_full_vocab_when_topk_covers_it_and_alpha_zero_is_forward_kl() -> None:
    out = make_head("sdpo", topk=100, alpha=0.0, is_clip=None).apply(logit_batch())
    expected = [
        kl(softmax(T_LOGITS[r][t]), softmax(S_LOGITS[r][t]))
        for r in range(2)
        for t in range(3)
        if MASK[r][t]
    ]
    assert out.replace_loss is not None
    assert out.replace_loss.item() == pytest.approx(sum(expected) / len(expected), rel=1e-5)


@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_sdft_kl_direction_and_gradient(direction: str) -> None:
    """Per-sequence mean, then mean over rows (skip_tokens=0 here; the skip has its own test)."""
    batch = logit_batch()
    out = make_head("sdft", direction=direction, skip_tokens=0).apply(batch)
    assert out.replace_loss is not None and out.aux_loss is None
    cells = [(r, t) for r in range(2) for t in range(3) if MASK[r][t]]
    per_row = {r: sum(int(m) for m in MASK[r]) for r in range(2)}  # 2 and 3 tokens
    values = {}
    for r, t in cells:
        p, q = softmax(S_LOGITS[r][t]), softmax(T_LOGITS[r][t])
        values[r, t] = kl(q, p) if direction == "forward" else kl(p, q)
    row_means = [sum(v for (r, _), v in values.items() if r == row) / per_row[row] for row in (0, 1)]
    assert out.replace_loss.item() == pytest.approx(sum(row_means) / 2, rel=1e-5)
    out.replace_loss.backward()
    grad = batch.student_logits.grad
    assert grad is not None and batch.teacher_logits.grad is None
    assert torch.all(grad[0, 2] == 0)
    for r, t in cells:
        p, q = softmax(S_LOGITS[r][t]), softmax(T_LOGITS[r][t])
        scale = 1.0 / (per_row[r] * 2)
        if direction == "forward":  # ∂KL(q‖p)/∂z = p − q
            by_hand = [(a - b) * scale for a, b in zip(p, q, strict=True)]
        else:  # ∂KL(p‖q)/∂z_v = p_v·(log p_v − log q_v − KL(p‖q))
            d = kl(p, q)
            by_hand = [a * (math.log(a / b) - d) * scale for a, b in zip(p, q, strict=True)]
        assert grad[r, t].tolist() == pytest.approx(by_hand, abs=1e-6)
    other = "reverse" if direction == "forward" else "forward"
    token_mean = sum(values.values()) / len(values)
    assert out.metrics[f"sdft/{direction}_kl_mean"] == pytest.approx(token_mean, rel=1e-5)
    assert out.metrics[f"sdft/{other}_kl_mean"] > 0


def test_sdft_skips_the_first_tokens_and_rows_without_teacher() -> None:
    """skip_tokens=1 drops position 0; a row without a teacher context is not in the mean."""
    out = make_head("sdft", skip_tokens=1).apply(logit_batch(has_teacher=[False, True]))
    kept = [kl(softmax(T_LOGITS[1][t]), softmax(S_LOGITS[1][t])) for t in (1, 2)]
    assert out.replace_loss is not None
    assert out.replace_loss.item() == pytest.approx(sum(kept) / 2, rel=1e-5)
    default = make_head("sdft")
    assert default.skip_tokens == 3 and default.ema_decay == 0.01
    assert default.entropy_coef == 0.0 and default.kl_coef == 0.0
    # the reference skips 3 tokens: a 3-token batch leaves nothing to distil, and no gradient
    empty = default.apply(logit_batch())
    assert empty.replace_loss is not None and empty.replace_loss.item() == 0.0


def test_logit_heads_need_logits() -> None:
    batch = logit_batch()
    batch.student_logits = None
    for name in ("sdpo", "sdft"):
        with pytest.raises(ValueError, match="student_logits"):
            make_head(name).apply(batch)
