"""The MaskablePPO slot-scoring policy: one scorer shared by every candidate slot."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from baselines.reference.slot_policy import SlotScorer, SlotScoringPolicy

OBS_DIM, SLOTS, ACTION_DIM = 16, 5, 8
SIZE = 2 * OBS_DIM + SLOTS * 2 * ACTION_DIM


def _space() -> gym.spaces.Box:
    return gym.spaces.Box(0.0, 1.0, shape=(SIZE,), dtype=np.float32)


def _scorer() -> SlotScorer:
    torch.manual_seed(0)
    return SlotScorer(_space(), OBS_DIM, SLOTS, ACTION_DIM)


def test_permuting_the_slots_permutes_the_scores() -> None:
    scorer = _scorer()
    features = torch.rand(3, SIZE)
    context, slots = features[:, : 2 * OBS_DIM], features[:, 2 * OBS_DIM:].reshape(3, SLOTS, -1)
    order = torch.tensor([3, 0, 4, 1, 2])
    permuted = torch.cat([context, slots[:, order].reshape(3, -1)], dim=1)
    scores, h = scorer(features).split([SLOTS, 64], dim=1)
    permuted_scores, permuted_h = scorer(permuted).split([SLOTS, 64], dim=1)
    assert torch.allclose(permuted_scores, scores[:, order], atol=1e-6)
    assert torch.allclose(permuted_h, h)
    assert not torch.allclose(scores[:, 0], scores[:, 1])


def test_policy_logits_are_the_slot_scores_and_respect_the_mask() -> None:
    policy = SlotScoringPolicy(_space(), gym.spaces.Discrete(SLOTS), lambda _: 1e-3,
                               features_extractor_kwargs={"obs_dim": OBS_DIM, "max_actions": SLOTS,
                                                          "action_dim": ACTION_DIM})
    features = torch.rand(4, SIZE)
    scores = policy.features_extractor(features)[:, :SLOTS]
    distribution = policy.get_distribution(features)
    assert torch.allclose(distribution.distribution.logits,
                          torch.log_softmax(scores, dim=1), atol=1e-5)
    mask = np.array([[True, False, True, False, False]] * 4)
    actions, _, _ = policy(features, action_masks=mask)
    assert set(actions.tolist()) <= {0, 2}
    assert any(p is policy.features_extractor.scorer[-1].weight
               for group in policy.optimizer.param_groups for p in group["params"])


def test_scorer_rejects_a_mismatched_layout() -> None:
    scorer = _scorer()
    with pytest.raises(ValueError, match="expected 112"):
        scorer(torch.rand(2, SIZE + 3))
