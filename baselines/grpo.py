"""The GRPO core, readable top to bottom: training rewards, group advantages, clipped loss, KL.

Notation per turn-row ``i`` of episode ``e`` in group ``g`` and response token ``t``:

* training return ``R_e = won_coef·won_e + score_coef·score_e`` (METHODS.md: 10·won);
* row return ``r_i = R_e − p·[turn i's action was invalid]`` (``p`` the invalid-action penalty);
* advantage, ``scope="episode"`` (default: every episode weighs the same):
  ``A_i = (R_e − mean_g(R)) / (std_g(R) + ε) − p·[invalid_i]`` with mean/std over the group's
  episodes; the penalty stays outside the normalisation, so a group whose episodes all score
  the same does not turn a 0.1 penalty into a huge advantage;
  ``scope="turn"`` (verl-agent's default: long episodes weigh more):
  ``A_i = (r_i − mean_g(r)) / (std_g(r) + ε)`` with mean/std over the group's turn-rows;
  ``A_i`` is broadcast to every token of the row;
* ratio ``ρ_t = exp(s_t − o_t)`` (new vs rollout log-prob); PPO clip with separate low/high
  bounds, plus dual clip for negative advantages (Ye et al. 2020):
  ``L_t = max(−A ρ_t, −A clip(ρ_t, 1−ε_low, 1+ε_high))`` and, if ``A < 0``,
  ``L_t = min(L_t, −A·c_dual)``;
* token-mean reduction: ``Σ_t L_t m_t / Σ_t m_t`` over all response tokens of the batch;
* low-variance KL to a reference (Schulman's k3): ``k_t = exp(r_t − s_t) − (r_t − s_t) − 1``;
* entropy bonus ``−β·H`` with ``H`` the token-mean entropy of the policy.

Sources: DeepSeekMath (GRPO), verl ``core_algos`` (dual clip, low_var_kl), verl-agent (turn rows).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from baselines.typecheck import check_fields

ADVANTAGE_SCOPES: tuple[str, ...] = ("episode", "turn")
"""``episode``: one return per trajectory, normalised in its group; ``turn``: per-row returns."""


@dataclass
class GRPOConfig:
    """GRPO hyper-parameters (METHODS.md defaults): returns, advantages, the clipped loss and
    its KL / entropy terms, and the update's optimiser settings (the ``[grpo]`` preset table)."""

    won_coef: float = 10.0
    """Training return per won episode (METHODS.md: 10·won); the env's own reward is not shaped."""
    score_coef: float = 0.0
    """Training return per unit of the episode's final score in [0, 1]."""
    invalid_penalty: float = 0.1
    """Subtracted from the advantage of each turn whose action the env refused (outside the group
    normalisation)."""
    advantage_scope: str = "episode"
    """"episode": one return per episode, normalised in its group; "turn": per-turn returns
    normalised over the group's turns (verl-agent)."""
    eps: float = 1e-6
    """Added to the group's standard deviation before dividing."""
    clip_low: float = 0.2
    """PPO clip range below 1 for the ratio of new to rollout probabilities."""
    clip_high: float = 0.2
    """PPO clip range above 1 (larger than clip_low: DAPO's clip-higher)."""
    dual_clip: float = 3.0
    """Dual-clip bound c on the loss of negative-advantage tokens (Ye et al. 2020)."""
    entropy_coef: float = 0.001
    """Weight of the entropy bonus (a head may set its own)."""
    kl_coef: float = 0.01
    """Weight of the k3 KL to the frozen reference model (0: no reference forward; a head may set
    its own)."""
    lr: float = 3e-4
    """AdamW learning rate of the update."""
    ppo_epochs: int = 1
    """Passes over each rollout batch."""
    micro_batch_size: int = 32
    """Rows per forward/backward in phase 2 (gradients accumulate over the batch)."""
    max_grad_norm: float = 1.0
    """Gradients are clipped to this global norm before the optimizer step."""
    tempered_logprobs: bool = False
    """Train the policy rollouts sample from, ``softmax(logits / rollout.temperature)`` (verl's
    convention): the loss, the PPO ratio's old log-probs (recomputed before the update), entropy,
    teacher and reference log-probs all use the tempered distribution. False: raw-model
    log-probs."""

    def __post_init__(self) -> None:
        check_fields(self, "grpo.")
        if self.advantage_scope not in ADVANTAGE_SCOPES:
            raise ValueError(f"grpo.advantage_scope must be one of {ADVANTAGE_SCOPES}, "
                             f"got {self.advantage_scope!r}")
        if not self.lr > 0:
            raise ValueError(f"grpo.lr must be > 0, got {self.lr}")
        for name in ("ppo_epochs", "micro_batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"grpo.{name} must be >= 1, got {getattr(self, name)}")


def episode_returns(won: Sequence[bool], score: Sequence[float], config: GRPOConfig) -> torch.Tensor:
    """The training return ``R_e = won_coef·won + score_coef·score`` of each entry."""
    return torch.tensor(
        [config.won_coef * float(w) + config.score_coef * float(s) for w, s in zip(won, score)],
        dtype=torch.float32,
    )


def row_returns(
    won: Sequence[bool], score: Sequence[float], invalid: Sequence[bool], config: GRPOConfig
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(R_e per row, r_i per row)``: the episode's training return and the penalised row return."""
    episode = episode_returns(won, score, config)
    penalty = torch.tensor([config.invalid_penalty * float(x) for x in invalid], dtype=torch.float32)
    return episode, episode - penalty


def group_advantages(
    episode_return: torch.Tensor,
    row_return: torch.Tensor,
    group_ids: Sequence[int],
    traj_ids: Sequence[int],
    scope: str = "episode",
    eps: float = 1e-6,
) -> torch.Tensor:
    """Group-normalised advantage per row (see the module docstring)."""
    if scope not in ADVANTAGE_SCOPES:
        raise ValueError(f"advantage scope must be 'episode' or 'turn', got {scope!r}")
    rows_of_group: dict[int, list[int]] = defaultdict(list)
    for row, group in enumerate(group_ids):
        rows_of_group[int(group)].append(row)
    advantages = torch.zeros_like(row_return)
    for rows in rows_of_group.values():
        if scope == "episode":
            first_row_of_traj: dict[int, int] = {}
            for row in rows:
                first_row_of_traj.setdefault(int(traj_ids[row]), row)
            values = episode_return[list(first_row_of_traj.values())]
            targets, penalty = episode_return[rows], episode_return[rows] - row_return[rows]
        else:
            values = row_return[rows]
            targets, penalty = row_return[rows], torch.zeros(len(rows))
        mean = values.mean()
        std = values.std(unbiased=True) if values.numel() > 1 else torch.zeros(())
        advantages[rows] = (targets - mean) / (std + eps) - penalty
    return advantages


def group_outcome_counts(
    won: Sequence[bool], score: Sequence[float], group_ids: Sequence[int], config: GRPOConfig
) -> dict[str, int]:
    """Per rollout, one entry per episode: how many groups there are (``groups``), how many won
    every episode (``groups_all_won``) and how many gave every episode the same training return
    ``R_e`` (``groups_zero_std``; TRL's ``frac_reward_zero_std``): such a group's advantages are
    0 but for the invalid-action penalty, so it teaches nothing about winning. Many all-won
    groups mean the policy already solves its training tasks (e.g. they are the warm start's
    own demonstration tasks)."""
    episode_return = episode_returns(won, score, config)
    returns: dict[int, set[float]] = defaultdict(set)
    all_won: dict[int, bool] = {}
    for w, r, g in zip(won, episode_return.tolist(), group_ids, strict=True):
        returns[int(g)].add(r)
        all_won[int(g)] = all_won.get(int(g), True) and bool(w)
    return {"groups": len(returns), "groups_all_won": sum(all_won.values()),
            "groups_zero_std": sum(len(values) == 1 for values in returns.values())}


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Token-mean of ``values`` over ``mask`` (0 when the mask is empty)."""
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp(min=1.0)


def clipped_policy_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    config: GRPOConfig,
) -> tuple[torch.Tensor, dict[str, float]]:
    """PPO clip + dual clip, token-mean. Tensors are ``[rows, tokens]``; advantages per token."""
    ratio = torch.exp(logprobs - old_logprobs)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - config.clip_low, 1.0 + config.clip_high)
    loss = torch.maximum(unclipped, clipped)
    dual = torch.minimum(loss, -advantages * config.dual_clip)
    loss = torch.where(advantages < 0, dual, loss)
    stats = {
        "clip_fraction": float(masked_mean((clipped > unclipped).float(), mask)),
        "ratio_mean": float(masked_mean(ratio.detach(), mask)),
    }
    return masked_mean(loss, mask), stats


def low_variance_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(π‖π_ref), clamped to [-10, 10] as in verl."""
    log_ratio = torch.clamp(ref_logprobs - logprobs, -20.0, 20.0)
    return torch.clamp(torch.exp(log_ratio) - log_ratio - 1.0, -10.0, 10.0)


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """Per-position entropy of the categorical distribution given by ``logits``."""
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    return -(log_probs.exp() * log_probs).sum(dim=-1)


@dataclass
class LossTerms:
    """The micro-batch loss and its parts (:func:`compose_loss`)."""

    loss: torch.Tensor
    policy_loss: torch.Tensor
    entropy: torch.Tensor
    kl: torch.Tensor
    stats: dict[str, float]


def compose_loss(
    logprobs: torch.Tensor,
    logits: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    weight: float,
    config: GRPOConfig,
    entropy_coef: float,
    kl_coef: float,
    reference_logprobs: torch.Tensor | None = None,
    replace_loss: torch.Tensor | None = None,
    aux_loss: torch.Tensor | None = None,
) -> LossTerms:
    """One micro-batch's share of the step's loss, every term in one place:

    ``L = −β·H·w + (L_head if a head replaces the loss else L_clip·w + L_aux) + λ_KL·KL·w``

    with ``L_clip`` :func:`clipped_policy_loss` on ``advantages`` (GRPO's, or a head's reshaped
    ones), ``H`` the token-mean entropy, ``KL`` the token-mean k3 estimate to the reference
    (when ``reference_logprobs`` are given) and ``w`` the micro-batch's share of the batch's
    response tokens (so the sum over micro-batches is the batch's token mean). A head's
    ``replace_loss`` / ``aux_loss`` are already normalised over the batch by the head."""
    policy_loss, stats = clipped_policy_loss(logprobs, old_logprobs, advantages, mask, config)
    entropy = masked_mean(entropy_from_logits(logits), mask)
    loss = -entropy_coef * entropy * weight
    if replace_loss is not None:
        loss = loss + replace_loss
    else:
        loss = loss + policy_loss * weight
        if aux_loss is not None:
            loss = loss + aux_loss
    kl = torch.zeros(())
    if reference_logprobs is not None:
        kl = masked_mean(low_variance_kl(logprobs, reference_logprobs), mask)
        loss = loss + kl_coef * kl * weight
    return LossTerms(loss, policy_loss, entropy, kl, stats)
