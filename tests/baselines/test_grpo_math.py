"""GRPO core on hand-computed values."""

from __future__ import annotations

import math

import pytest
import torch

from baselines.grpo import (
    GRPOConfig,
    clipped_policy_loss,
    entropy_from_logits,
    group_advantages,
    group_outcome_counts,
    low_variance_kl,
    masked_mean,
    row_returns,
)
from baselines.metrics import largest_drop, steps_below_half_best, validation_auc

# group 0: trajectory 0 won (2 turns, the 2nd invalid), trajectory 1 lost; group 1: both won
WON = [True, True, False, True, True]
INVALID = [False, True, False, False, False]
GROUPS = [0, 0, 0, 1, 1]
TRAJS = [0, 0, 1, 2, 3]


def test_row_returns_apply_won_reward_and_invalid_penalty() -> None:
    episode, row = row_returns(WON, [1, 1, 0, 1, 1], INVALID, GRPOConfig())
    assert episode.tolist() == [10.0, 10.0, 0.0, 10.0, 10.0]
    assert row.tolist() == pytest.approx([10.0, 9.9, 0.0, 10.0, 10.0])
    episode, _ = row_returns(WON, [0.5] * 5, INVALID, GRPOConfig(won_coef=0.0, score_coef=2.0))
    assert episode.tolist() == [1.0] * 5


def test_group_advantages_per_episode_statistics() -> None:
    episode, row = row_returns(WON, [1, 1, 0, 1, 1], INVALID, GRPOConfig())
    advantages = group_advantages(episode, row, GROUPS, TRAJS, "episode")
    std = math.sqrt(50.0)  # episodes 10 and 0: mean 5, unbiased std sqrt(50)
    expected = [5 / std, 5 / std - 0.1, -5 / std, 0.0, 0.0]  # the penalty stays outside
    assert advantages.tolist() == pytest.approx(expected, abs=1e-5)


def test_equal_episodes_with_a_penalty_get_a_small_advantage() -> None:
    episode, row = row_returns([False, False], [0, 0], [True, False], GRPOConfig())
    advantages = group_advantages(episode, row, [0, 0], [0, 1], "episode")
    assert advantages.tolist() == pytest.approx([-0.1, 0.0])


def test_group_outcome_counts_find_groups_that_teach_nothing_about_winning() -> None:
    # one episode per entry: group 0 mixed, group 1 all won, group 2 all lost with equal scores,
    # group 3 all lost with different scores (equal returns unless the score is rewarded)
    won = [True, False, True, True, False, False, False, False]
    score = [1.0, 0.2, 1.0, 1.0, 0.5, 0.5, 0.1, 0.9]
    groups = [0, 0, 1, 1, 2, 2, 3, 3]
    counts = group_outcome_counts(won, score, groups, GRPOConfig())
    assert counts == {"groups": 4, "groups_all_won": 1, "groups_zero_std": 3}
    with_score = group_outcome_counts(won, score, groups, GRPOConfig(score_coef=1.0))
    assert with_score["groups_zero_std"] == 2 and with_score["groups_all_won"] == 1


def test_group_advantages_per_turn_row_statistics() -> None:
    episode, row = row_returns(WON, [1, 1, 0, 1, 1], INVALID, GRPOConfig())
    advantages = group_advantages(episode, row, GROUPS, TRAJS, "turn")
    mean = (10 + 9.9 + 0) / 3
    std = math.sqrt(((10 - mean) ** 2 + (9.9 - mean) ** 2 + mean**2) / 2)
    assert advantages[:3].tolist() == pytest.approx(
        [(10 - mean) / std, (9.9 - mean) / std, -mean / std], abs=1e-5)
    with pytest.raises(ValueError, match="scope"):
        group_advantages(episode, row, GROUPS, TRAJS, "batch")


def test_clipped_loss_with_dual_clip_and_mask() -> None:
    old = torch.zeros(2, 3)
    new = torch.log(torch.tensor([[1.5, 0.9, 7.0], [0.5, 5.0, 7.0]]))
    advantages = torch.tensor([[1.0] * 3, [-1.0] * 3])
    mask = torch.tensor([[True, True, False], [True, True, False]])
    loss, stats = clipped_policy_loss(new, old, advantages, mask, GRPOConfig())
    # row 0 (A=+1): max(-1.5, -1.2) = -1.2; max(-0.9, -0.9) = -0.9
    # row 1 (A=-1): max(0.5, 0.8) = 0.8; max(5, 1.2) = 5 -> dual clip min(5, 3) = 3
    assert float(loss) == pytest.approx((-1.2 - 0.9 + 0.8 + 3.0) / 4)
    assert 0.0 <= stats["clip_fraction"] <= 1.0


def test_clipped_loss_gradient_zero_where_clipped_or_masked() -> None:
    new = torch.log(torch.tensor([[1.5, 1.0, 1.0]])).requires_grad_(True)
    loss, _ = clipped_policy_loss(new, torch.zeros(1, 3), torch.ones(1, 3),
                                  torch.tensor([[True, True, False]]), GRPOConfig())
    loss.backward()
    # token 0 is clipped (ratio 1.5 > 1.2, A > 0): no gradient; token 1: d(-ratio)/dlogp / 2
    assert new.grad.tolist()[0] == pytest.approx([0.0, -0.5, 0.0])


def test_low_variance_kl_k3_estimator() -> None:
    value = low_variance_kl(torch.log(torch.tensor([0.5])), torch.log(torch.tensor([0.25])))
    assert float(value) == pytest.approx(0.5 + math.log(2) - 1)
    assert float(low_variance_kl(torch.tensor([-1.0]), torch.tensor([-1.0]))) == 0.0


def test_entropy_and_masked_mean() -> None:
    assert float(entropy_from_logits(torch.zeros(1, 2))) == pytest.approx(math.log(2))
    values = torch.tensor([[1.0, 2.0, 100.0]])
    assert float(masked_mean(values, torch.tensor([[True, True, False]]))) == 1.5
    assert float(masked_mean(values, torch.zeros(1, 3, dtype=torch.bool))) == 0.0


def test_validation_auc_and_stability_figures() -> None:
    assert validation_auc([0, 5, 10], [0.0, 0.5, 1.0]) == pytest.approx(0.5)
    assert validation_auc([0, 5], [0.2, 0.2], horizon=10) == pytest.approx(0.1)
    assert largest_drop([0.2, 0.6, 0.1, 0.5]) == pytest.approx(0.5)
    assert steps_below_half_best([0, 5, 10, 15], [0.8, 0.3, 0.9, 0.9]) == 5


def test_compose_loss_sums_every_term_as_the_docstring_says() -> None:
    """L = −β·H·w + L_clip·w + L_aux + λ·KL·w, or −β·H·w + L_head + λ·KL·w when a head replaces
    the loss; each term checked against its own function."""
    import torch

    from baselines.grpo import (
        GRPOConfig,
        clipped_policy_loss,
        compose_loss,
        entropy_from_logits,
        low_variance_kl,
        masked_mean,
    )

    torch.manual_seed(0)
    logits = torch.randn(3, 5, 11)
    ids = torch.randint(0, 11, (3, 5))
    logprobs = torch.log_softmax(logits, -1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    old, reference = logprobs + 0.05 * torch.randn(3, 5), logprobs + 0.1 * torch.randn(3, 5)
    advantages = torch.randn(3, 5)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[2, 3:] = False
    config, weight, beta, lam = GRPOConfig(), 0.4, 0.01, 0.2
    aux, replace = torch.tensor(0.7), torch.tensor(-1.3)
    entropy = masked_mean(entropy_from_logits(logits), mask)
    policy, _ = clipped_policy_loss(logprobs, old, advantages, mask, config)
    kl = masked_mean(low_variance_kl(logprobs, reference), mask)
    added = compose_loss(logprobs, logits, old, advantages, mask, weight, config, beta, lam,
                         reference, aux_loss=aux)
    assert torch.allclose(added.loss, -beta * entropy * weight + policy * weight + aux
                          + lam * kl * weight)
    replaced = compose_loss(logprobs, logits, old, advantages, mask, weight, config, beta, lam,
                            reference, replace_loss=replace, aux_loss=aux)
    assert torch.allclose(replaced.loss, -beta * entropy * weight + replace + lam * kl * weight)
    plain = compose_loss(logprobs, logits, old, advantages, mask, weight, config, beta, lam)
    assert plain.kl.item() == 0.0 and torch.allclose(plain.loss, -beta * entropy * weight
                                                     + policy * weight)


def test_the_seed_layout_keeps_every_stream_apart() -> None:
    """Group seeds of neighbouring run seeds, and the sampling seeds of training, validation,
    test and premise, never collide for runs of realistic size (the layout's docstring)."""
    from baselines.seed_layout import (
        PREMISE_OFFSET,
        TEST_OFFSET,
        VALIDATION_OFFSET,
        group_seeds,
        sampling_seed,
    )

    groups = [set(s for step in range(1, 501) for s in group_seeds(run, step, 16))
              for run in range(3)]
    assert not (groups[0] & groups[1] or groups[1] & groups[2])
    for run in range(3):
        training = {sampling_seed(run, step) for step in range(1, 10_001)}
        validation = {sampling_seed(run, VALIDATION_OFFSET + k) for k in range(8)}
        test = {sampling_seed(run, TEST_OFFSET + k) for k in range(8)}
        premise = {PREMISE_OFFSET + k for k in range(8)}
        assert not (training & validation or training & test or validation & test
                    or premise & (training | validation | test))
    assert sampling_seed(0, 5, rank=1) != sampling_seed(0, 5, rank=0)
