"""A MaskablePPO policy that scores every candidate slot with the same network.

A plain MLP over :class:`~sdgym.wrappers.AdmissibleDiscrete` features must learn each slot's logit
separately, so what it learns about "the answer mentioned after *capital is*" in slot 5 does not
carry over to slot 7. Here one scorer rates each slot from the context (task and observation
embedding ``h``) and the slot's own embedding ``e`` (candidate words and the words around its
mention): ``logit_k = MLP([h, e_k, h * e_k])``. The value head reads the scores and ``h``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from sdgym.wrappers.admissible_discrete import split_features


class SlotScorer(BaseFeaturesExtractor):
    """Features ``[logit_1..logit_K, h]``: one shared score per candidate slot, then the context."""

    def __init__(self, observation_space: gym.spaces.Box, obs_dim: int, max_actions: int,
                 action_dim: int, hidden: int = 64) -> None:
        super().__init__(observation_space, features_dim=max_actions + hidden)
        self.layout = (obs_dim, max_actions, action_dim)
        self.context_net = nn.Sequential(nn.Linear(2 * obs_dim, hidden), nn.Tanh())
        self.slot_net = nn.Sequential(nn.Linear(2 * action_dim, hidden), nn.Tanh())
        self.scorer = nn.Sequential(nn.Linear(3 * hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        obs_dim, max_actions, action_dim = self.layout
        expected = 2 * obs_dim + max_actions * 2 * action_dim
        if observations.shape[-1] != expected:
            raise ValueError(f"features of size {observations.shape[-1]}, expected {expected} "
                             f"(AdmissibleDiscrete with obs_dim={obs_dim}, max_actions="
                             f"{max_actions}, action_dim={action_dim})")
        context, slots = split_features(observations, *self.layout)
        h = self.context_net(context)
        e = self.slot_net(slots)
        h_slots = h.unsqueeze(-2).expand_as(e)
        scores = self.scorer(torch.cat([h_slots, e, h_slots * e], dim=-1)).squeeze(-1)
        return torch.cat([scores, h], dim=-1)


class SlotLogits(nn.Module):
    """The action head: the first ``count`` features (the slot scores) as logits."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        return latent[..., : self.count]


class SlotScoringPolicy(MaskableActorCriticPolicy):
    """:class:`MaskableActorCriticPolicy` with :class:`SlotScorer` logits (no policy MLP on top).

    ``features_extractor_kwargs`` must give the wrapper's layout: ``obs_dim``, ``max_actions``,
    ``action_dim``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("net_arch", {"pi": [], "vf": [64]})
        kwargs.setdefault("features_extractor_class", SlotScorer)
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = SlotLogits(int(self.action_space.n))
        last = self.features_extractor.scorer[-1]
        nn.init.orthogonal_(last.weight, gain=0.01)  # near-uniform first policy
        nn.init.zeros_(last.bias)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),
                                              **self.optimizer_kwargs)
