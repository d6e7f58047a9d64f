"""Gradient direction of every teacher head, through the loss the trainer optimises.

One row, two response tokens, a positive GRPO advantage (the episode was won): token 0 is one the
teacher endorses (teacher log-prob far above the student's), token 1 one it rejects (far below).
Plain GRPO pushes both up equally; every head that uses the teacher's token log-probs must push
the endorsed token up *more* than the rejected one (opsd's JSD default is logit-level: its
gradient is checked in test_opsd). Two heads act coarser by their formulas:
grpo_opsd's constant gate adds the same push to every token, and agentopsd reshapes whole turns
(checked with an endorsed and a rejected turn of one episode). The logit-level heads (sdpo, sdft)
have their own gradient checks in test_logit_heads.
"""

from __future__ import annotations

import pytest
import torch

from baselines.grpo import GRPOConfig, clipped_policy_loss
from baselines.heads import make_head
from baselines.heads.base import HeadBatch

TOKEN_HEADS = ["opid", "opsd_pg", "opsd_sdar", "pcsd", "rlsd", "sdar", "skill_sd"]
VARIANTS = {"opsd_pg": ("opsd", {"loss": "pg"})}  # opsd's sampled-token (tinker) variant


def _training_loss(name: str | None, by_turn: bool = False) -> torch.Tensor:
    """Ascent direction per token; ``by_turn`` puts the two tokens in two turns (rows) of one
    episode instead of one row."""
    shape = (2, 1) if by_turn else (1, 2)
    student = torch.full(shape, -1.0, requires_grad=True)
    rows = shape[0]
    batch = HeadBatch(
        student_logprobs=student,
        old_logprobs=student.detach().clone(),
        advantages=torch.ones(shape),
        mask=torch.ones(shape),
        teacher_logprobs=torch.tensor([-0.1, -4.0]).reshape(shape),
        has_teacher=torch.tensor([True] * rows),
        group_ids=[0] * rows,
        traj_ids=[0] * rows,
        turn_ids=list(range(rows)),
        won=[True] * rows,
        group_success_rate=[0.5] * rows,
        step=0,
    )
    advantages = batch.advantages
    aux = replace = None
    if name is not None:
        head, kwargs = VARIANTS.get(name, (name, {}))
        out = make_head(head, **kwargs).apply(batch)
        advantages = out.advantages if out.advantages is not None else advantages
        aux, replace = out.aux_loss, out.replace_loss
    policy_loss, _ = clipped_policy_loss(student, batch.old_logprobs, advantages, batch.mask,
                                         GRPOConfig())
    loss = replace if replace is not None else policy_loss + (aux if aux is not None else 0.0)
    loss.backward()
    return -student.grad.flatten()  # the direction a descent step moves each token's log-prob


def test_plain_grpo_moves_both_tokens_alike() -> None:
    ascent = _training_loss(None)
    assert ascent[0] == pytest.approx(float(ascent[1])) and ascent[0] > 0


@pytest.mark.parametrize("name", TOKEN_HEADS)
def test_head_favours_the_teacher_endorsed_token(name: str) -> None:
    ascent = _training_loss(name)
    assert ascent[0] > ascent[1] + 1e-6, f"{name}: endorsed {ascent[0]:.4g} vs rejected {ascent[1]:.4g}"
    assert ascent[0] > 0  # the endorsed token of a won episode is pushed up


def test_grpo_opsd_adds_the_same_push_to_every_token() -> None:
    plain, head = _training_loss(None), _training_loss("grpo_opsd")
    # L0 + c·mean ½(q − s): ∂/∂s_t = −c/(2N) for every token (c = 0.01, N = 2)
    assert (head - plain).tolist() == pytest.approx([0.0025, 0.0025], rel=1e-5)


def test_agentopsd_favours_the_teacher_endorsed_turn() -> None:
    ascent = _training_loss("agentopsd", by_turn=True)
    assert ascent[0] > ascent[1] + 1e-6 and ascent[1] > 0  # both pushed up (won), turn 0 more
