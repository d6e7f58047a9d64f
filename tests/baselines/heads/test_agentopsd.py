"""agentopsd: per-episode turn grouping, belief recursion, z-score and signed multipliers."""

from __future__ import annotations

import math

import pytest
import torch

from baselines.heads import make_head
from baselines.heads.base import HeadBatch

# rows are turns, deliberately out of order: (traj, turn, per-token gaps δ, A)
ROWS = [
    (7, 2, [0.4, 0.2], 1.0),
    (7, 0, [-0.3, 0.1], 1.0),
    (9, 1, [0.5, 0.5], -1.0),
    (7, 1, [1.0, 99.0], 1.0),  # second token masked: its wild gap must not count
    (9, 0, [-0.2, 0.0], -1.0),
    (11, 0, [0.3, 0.3], 1.0),  # one-turn episode: z = 0, multiplier 1
]
SUCCESS = 0.5  # V0: two of the group's three episodes won


def toy_batch(rows: list[tuple[int, int, list[float], float]], step: int = 0) -> HeadBatch:
    student = torch.full((len(rows), 2), -0.5, requires_grad=True)
    mask = torch.ones(len(rows), 2)
    for i, (_, turn, _, _) in enumerate(rows):
        if turn == 1 and rows[i][0] == 7:
            mask[i, 1] = 0.0
    return HeadBatch(
        student_logprobs=student,
        old_logprobs=student.detach().clone(),
        advantages=torch.tensor([[a, a] for *_, a in rows]),
        mask=mask,
        teacher_logprobs=student.detach() + torch.tensor([g for _, _, g, _ in rows]),
        traj_ids=[r[0] for r in rows],
        turn_ids=[r[1] for r in rows],
        group_success_rate=[SUCCESS] * len(rows),
        step=step,
    )


def multipliers_by_hand(turn_gaps: list[float], adv: float, v0: float = SUCCESS) -> list[float]:
    """m_k for one episode whose turn gaps Δ_k are given in turn order."""
    sig = lambda x: 1.0 / (1.0 + math.exp(-x))  # noqa: E731
    logit_v0 = math.log(v0 / (1 - v0))
    beliefs, total = [], logit_v0
    for gap in turn_gaps:
        total += gap
        beliefs.append(min(max(sig(total), 1e-6), 1 - 1e-6))
    previous = [v0, *beliefs[:-1]]
    u = [b - p for b, p in zip(beliefs, previous, strict=True)]
    mean = sum(u) / len(u)
    std = math.sqrt(sum((x - mean) ** 2 for x in u) / len(u))
    sign = 1.0 if adv > 0 else -1.0
    return [min(max(1 + 0.2 * sign * (x - mean) / (std + 1e-6), 0.8), 1.2) for x in u]


def test_agentopsd_turn_grouping_by_hand() -> None:
    out = make_head("agentopsd").apply(toy_batch(ROWS))
    assert out.advantages is not None and out.aux_loss is None
    m7 = multipliers_by_hand([-0.2, 1.0, 0.6], 1.0)  # turns 0, 1 (masked token dropped), 2
    m9 = multipliers_by_hand([-0.2, 1.0], -1.0)
    # written out for the losing episode: u = (σ(−.2)−.5, σ(.8)−σ(−.2)) → z = (−1, +1) →
    # m = (1.2, 0.8): the turn that raised the success belief is blamed less
    assert m9 == pytest.approx([1.2, 0.8], abs=1e-5)
    expected_rows = {0: m7[2], 1: m7[0], 2: m9[1], 3: m7[1], 4: m9[0], 5: 1.0}
    lam = 0.5
    for row, m in expected_rows.items():
        adv = ROWS[row][3] * ((1 - lam) + lam * m)
        token_mask = [1.0, 0.0] if row == 3 else [1.0, 1.0]
        assert out.advantages[row].tolist() == pytest.approx([adv * k for k in token_mask])
    assert out.metrics["agentopsd/lambda"] == 0.5
    assert out.metrics["agentopsd/episodes"] == 3.0


def test_agentopsd_zscore_is_within_episode_and_lambda_decays() -> None:
    alone = make_head("agentopsd").apply(toy_batch([r for r in ROWS if r[0] == 7]))
    mixed = make_head("agentopsd").apply(toy_batch(ROWS))
    assert alone.advantages is not None and mixed.advantages is not None
    assert torch.equal(alone.advantages, mixed.advantages[[0, 1, 3]])
    late = make_head("agentopsd", warmdown_steps=100).apply(toy_batch(ROWS, step=100))
    assert late.advantages is not None
    assert late.advantages[:, 0].tolist() == [r[3] for r in ROWS]  # λ = 0: plain A
    constant = make_head("agentopsd").apply(toy_batch(ROWS, step=100))  # the recipe: constant
    assert constant.metrics["agentopsd/lambda"] == 0.5


def test_agentopsd_needs_turn_ids() -> None:
    batch = toy_batch(ROWS)
    batch.turn_ids = []
    with pytest.raises(ValueError, match="turn_ids"):
        make_head("agentopsd").apply(batch)


def test_agentopsd_reference_v0_is_the_clamped_group_mean_return() -> None:
    """v0="group_return" (the reference code): clamp(mean 10·won, 1e-4, 1 − 1e-4) saturates."""
    rows = [r for r in ROWS if r[0] == 9]
    batch = toy_batch(rows)
    batch.group_mean_return = [10.0 * SUCCESS] * len(rows)
    out = make_head("agentopsd", v0="group_return").apply(batch)
    m9 = multipliers_by_hand([-0.2, 1.0], -1.0, v0=1 - 1e-4)
    by_turn = {1: m9[1], 0: m9[0]}
    for i, (_, turn, _, adv) in enumerate(rows):
        assert out.advantages[i, 0].item() == pytest.approx(adv * (0.5 + 0.5 * by_turn[turn]),
                                                             rel=1e-5)
    assert any("v0" in d for d in make_head("agentopsd").deviations({}))


def test_agentopsd_rows_without_teacher_keep_their_advantage() -> None:
    batch = toy_batch(ROWS)
    batch.has_teacher = torch.tensor([True, True, False, True, False, True])
    out = make_head("agentopsd").apply(batch)
    assert out.advantages[[2, 4], 0].tolist() == [-1.0, -1.0]  # episode 9 has no context


def test_agentopsd_turns_without_teacher_are_left_out_of_the_z_scores() -> None:
    """Episode 7 with its middle turn (turn 1) lacking a context: the other two turns get the
    multipliers of a two-turn episode made of them alone."""
    batch = toy_batch(ROWS)
    batch.has_teacher = torch.tensor([True, True, True, False, True, True])
    out = make_head("agentopsd").apply(batch)
    m7 = multipliers_by_hand([-0.2, 0.6], 1.0)  # turns 0 and 2 only
    assert out.advantages[1, 0].item() == pytest.approx(0.5 + 0.5 * m7[0], rel=1e-5)
    assert out.advantages[0, 0].item() == pytest.approx(0.5 + 0.5 * m7[1], rel=1e-5)
    assert out.advantages[3, 0].item() == 1.0  # no context: plain A
