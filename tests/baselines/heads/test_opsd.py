"""opsd: the OPSD authors' generalized JSD and their sampled-token PG variant, by hand.

Reference formulas (siyan-zhao/OPSD ``generalized_jsd_loss`` / ``--use_tinker_loss``):
``M = (1−β)·S + β·T``, ``JSD = β·KL(T‖M) + (1−β)·KL(S‖M)``, token-mean over response tokens;
PG: ``L = −mean_t stopgrad(q_t − s_t)·s_t``.
"""

from __future__ import annotations

import pytest
import torch
from distributions_by_hand import kl, softmax

from baselines.heads import make_head
from baselines.heads.base import HeadBatch

S_LOGITS = [[[2.0, 0.0, -1.0], [0.3, 0.3, 0.0]], [[0.0, 1.0, 2.0], [1.0, -1.0, 0.5]]]
T_LOGITS = [[[0.0, 1.5, 0.0], [0.3, 0.3, 0.0]], [[2.0, 0.0, 0.0], [-1.0, 2.0, 0.0]]]
MASK = [[1.0, 1.0], [1.0, 0.0]]


def jsd(s_logits: list[float], t_logits: list[float], beta: float) -> float:
    s, t = softmax(s_logits), softmax(t_logits)
    m = [(1 - beta) * a + beta * b for a, b in zip(s, t, strict=True)]
    return beta * kl(t, m) + (1 - beta) * kl(s, m)


def batch(has_teacher: list[bool] | None = None) -> HeadBatch:
    student_lp = torch.tensor([[-1.0, -2.0], [-0.5, -3.0]], requires_grad=True)
    return HeadBatch(
        student_logprobs=student_lp,
        old_logprobs=student_lp.detach().clone(),
        advantages=torch.zeros(2, 2),
        mask=torch.tensor(MASK),
        teacher_logprobs=torch.tensor([[-0.2, -2.0], [-1.5, 0.0]]),
        has_teacher=None if has_teacher is None else torch.tensor(has_teacher),
        student_logits=torch.tensor(S_LOGITS, requires_grad=True),
        teacher_logits=torch.tensor(T_LOGITS, requires_grad=True),
    )


CELLS = [(0, 0), (0, 1), (1, 0)]


@pytest.mark.parametrize("beta", [0.5, 0.2])
def test_jsd_value_matches_the_reference_formula(beta: float) -> None:
    out = make_head("opsd", beta=beta).apply(batch())
    expected = sum(jsd(S_LOGITS[r][t], T_LOGITS[r][t], beta) for r, t in CELLS) / len(CELLS)
    assert out.replace_loss is not None and out.aux_loss is None and out.advantages is None
    assert out.replace_loss.item() == pytest.approx(expected, rel=1e-5)
    # identical distributions (row 0, token 1) contribute exactly 0
    assert jsd(S_LOGITS[0][1], T_LOGITS[0][1], beta) == pytest.approx(0.0, abs=1e-12)


def test_jsd_gradient_reaches_only_the_student_and_matches_finite_differences() -> None:
    b = batch()
    out = make_head("opsd").apply(b)
    assert out.replace_loss is not None
    out.replace_loss.backward()
    assert b.teacher_logits.grad is None and b.student_logits.grad is not None
    assert torch.all(b.student_logits.grad[1, 1] == 0)  # masked token
    assert torch.all(b.student_logits.grad[0, 1].abs() < 1e-7)  # S = T: a minimum
    h = 1e-4
    for r, t, v in [(0, 0, 0), (1, 0, 2)]:
        def total(delta: float, r=r, t=t, v=v) -> float:
            logits = [row[:] for row in S_LOGITS[r]]
            logits[t] = logits[t][:]
            logits[t][v] += delta
            cells = [(rr, tt) for rr, tt in CELLS]
            return sum(jsd(logits[tt] if rr == r else S_LOGITS[rr][tt], T_LOGITS[rr][tt], 0.5)
                       for rr, tt in cells) / len(cells)
        numeric = (total(h) - total(-h)) / (2 * h)
        assert float(b.student_logits.grad[r, t, v]) == pytest.approx(numeric, abs=1e-5)


def test_beta_endpoints_are_the_references_kl_special_cases() -> None:
    forward = make_head("opsd", beta=0.0).apply(batch())
    reverse = make_head("opsd", beta=1.0).apply(batch())
    def by_hand(p_first: bool) -> float:
        vals = []
        for r, t in CELLS:
            s, q = softmax(S_LOGITS[r][t]), softmax(T_LOGITS[r][t])
            vals.append(kl(s, q) if p_first else kl(q, s))
        return sum(vals) / len(vals)
    assert forward.replace_loss.item() == pytest.approx(by_hand(False), rel=1e-5)  # KL(T‖S)
    assert reverse.replace_loss.item() == pytest.approx(by_hand(True), rel=1e-5)  # KL(S‖T)


def test_pg_variant_rewards_the_sampled_token_by_the_teacher_gap() -> None:
    b = batch()
    out = make_head("opsd", loss="pg").apply(b)
    gaps = {(0, 0): -0.2 + 1.0, (0, 1): 0.0, (1, 0): -1.5 + 0.5}
    student = {(0, 0): -1.0, (0, 1): -2.0, (1, 0): -0.5}
    expected = -sum(gaps[c] * student[c] for c in CELLS) / 3
    assert out.replace_loss is not None
    assert out.replace_loss.item() == pytest.approx(expected, rel=1e-6)
    out.replace_loss.backward()
    # ∂L/∂s_t = −(q_t − s_t)/N: descent raises tokens the teacher prefers, lowers the others
    grad = b.student_logprobs.grad
    assert grad.tolist() == [pytest.approx([-0.8 / 3, 0.0]), pytest.approx([1.0 / 3, 0.0])]
    assert not make_head("opsd", loss="pg").wants_logits()


def test_rows_without_a_teacher_are_not_in_the_mean() -> None:
    out = make_head("opsd").apply(batch(has_teacher=[True, False]))
    expected = sum(jsd(S_LOGITS[0][t], T_LOGITS[0][t], 0.5) for t in (0, 1)) / 2
    assert out.replace_loss.item() == pytest.approx(expected, rel=1e-5)


def test_defaults_are_the_reference_recipe_and_deviations_are_recorded() -> None:
    head = make_head("opsd")
    assert (head.beta, head.loss, head.teacher_weights) == (0.5, "jsd", "frozen")
    assert head.entropy_coef == 0.0 and head.kl_coef == 0.0  # no RL term, no KL to a reference
    recipe = {"rollout": {"temperature": 1.1}, "grpo": {"tempered_logprobs": True, "lr": 2e-4}}
    assert head.deviations(recipe) == list(head.notes)  # only the fixed notes remain
    cpu = head.deviations({"rollout": {"temperature": 1.0},
                           "grpo": {"tempered_logprobs": False, "lr": 3e-4}})
    assert "rollout.temperature = 1.0 (reference: 1.1)" in cpu
    assert "grpo.lr = 0.0003 (reference: 0.0002)" in cpu
    assert any("current" in d for d in make_head("opsd", teacher_weights="current").deviations())
    with pytest.raises(ValueError, match="loss"):
        make_head("opsd", loss="kl")
