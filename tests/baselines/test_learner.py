"""The two-phase update: one step's gradient does not depend on ``micro_batch_size``, for every
head; batch-scope heads see whole episodes; rows without a teacher context add no teacher term."""

from __future__ import annotations

import copy
import random

import pytest
import torch

pytest.importorskip("transformers")

from agents.prompts import PublicTurn  # noqa: E402
from agents.rollout import TurnRow  # noqa: E402
from baselines.config import TrainConfig  # noqa: E402
from baselines.grpo import GRPOConfig  # noqa: E402
from baselines.heads import Head, available_heads, make_head  # noqa: E402
from baselines.learner import Learner  # noqa: E402
from baselines.teacher import TeacherWeights  # noqa: E402

VOCAB = 40
# (group, traj, turns, won): a 4-turn episode that any micro-batch size of 3 splits
EPISODES = [(0, 0, 4, True), (0, 1, 2, False), (1, 2, 1, True), (1, 3, 3, True), (1, 4, 2, False)]


def tiny_policy(seed: int = 0) -> torch.nn.Module:
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    config = Qwen3Config(vocab_size=VOCAB, hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         head_dim=8, max_position_embeddings=128, tie_word_embeddings=True,
                         pad_token_id=0)
    return Qwen3ForCausalLM(config).to(torch.float32).eval()


def synthetic_rows(seed: int = 1) -> tuple[list[TurnRow], list[list[int] | None]]:
    """Rows in rollout order (finished episodes one after another), varied lengths; a group's
    first turns share their prompt (as in a rollout: the forward runs it once); the teacher
    prompt is the student prompt with context tokens in front, missing for two rows."""
    rng = random.Random(seed)
    rows, teacher = [], []
    first = {g: [rng.randrange(1, VOCAB) for _ in range(6)] for g in {e[0] for e in EPISODES}}
    public = PublicTurn(env_id="sdgym/SearchQA-v0", task="t", step=1)
    for group, traj, turns, won in EPISODES:
        for turn in range(turns):
            prompt = first[group] if turn == 0 else [rng.randrange(1, VOCAB)
                                                     for _ in range(rng.randint(3, 7))]
            response = [rng.randrange(1, VOCAB) for _ in range(rng.randint(2, 6))]
            rows.append(TurnRow(
                group_id=group, traj_id=traj, turn=turn, task_id=str(group), task_type="x",
                public=public, prompt_ids=prompt, response_ids=response,
                old_logprobs=[-3.0 + 0.1 * k for k in range(len(response))], response_text="",
                reward=0.0, action_valid=(turn != 1), parse_error=None, done=turn == turns - 1,
                privileged=None, won=won, score=float(won)))
            context = [rng.randrange(1, VOCAB) for _ in range(4)]
            teacher.append(None if (traj, turn) in ((1, 0), (3, 2)) else context + prompt)
    return rows, teacher


def one_step(head_name: str | Head, micro_batch_size: int, policy: torch.nn.Module,
             teacher_prompts: bool = True) -> tuple[torch.nn.Module, dict]:
    head = make_head(head_name) if isinstance(head_name, str) else head_name
    model = copy.deepcopy(policy)
    config = TrainConfig(grpo=GRPOConfig(kl_coef=0.01, entropy_coef=0.01,
                                         micro_batch_size=micro_batch_size, max_grad_norm=1e9))
    modes = ["frozen"] + ([head.teacher_weights] if head.needs_teacher else [])
    teachers = TeacherWeights(model, modes, head.ema_decay)
    noise = torch.Generator().manual_seed(7)
    with torch.no_grad():  # let the EMA and frozen copies differ from the policy
        for copy_ in (teachers.ema, teachers.frozen):
            for p in copy_.parameters() if copy_ is not None else ():
                p.add_(0.05 * torch.randn(p.shape, generator=noise))
    learner = Learner(model, torch.optim.SGD(model.parameters(), lr=0.5), head, teachers,
                      config, pad_id=0)
    rows, prompts = synthetic_rows()
    prepared = learner.prepare(rows, prompts if teacher_prompts else [None] * len(rows), step=3)
    metrics = learner.train_epoch(prepared, step=3)
    return model, metrics


@pytest.mark.parametrize("head_name", available_heads())
def test_one_step_is_the_same_for_every_micro_batch_size(head_name: str) -> None:
    policy = tiny_policy()
    rows = sum(turns for _, _, turns, _ in EPISODES)
    whole, metrics = one_step(head_name, rows, policy)
    moved = max(float((a - b).abs().max()) for a, b in zip(whole.parameters(), policy.parameters()))
    assert moved > 1e-4, f"{head_name}: the step changed nothing"
    for size in (1, 3):  # 3 splits the 4-turn episode (rows 0–3) and the 3-turn one
        split, _ = one_step(head_name, size, policy)
        for a, b in zip(whole.parameters(), split.parameters()):
            assert torch.allclose(a, b, atol=2e-6, rtol=1e-5), (head_name, size)
    if make_head(head_name).needs_teacher:
        assert metrics["teacher/context_fraction"] == pytest.approx(10 / 12)


@pytest.mark.parametrize("head_name", [h for h in available_heads() if h != "grpo"])
def test_rows_without_a_teacher_context_leave_the_teacher_term_at_zero(head_name: str) -> None:
    """With no teacher context at all, every head's update is GRPO's with the head's own
    entropy/KL coefficients: the teacher term contributes exactly nothing."""
    policy = tiny_policy()
    head = make_head(head_name)
    no_teacher, metrics = one_step(head_name, 4, policy, teacher_prompts=False)
    assert metrics["teacher/context_fraction"] == 0.0
    replaces = head_name in ("opsd", "opsd_sdar", "sdft", "sdpo")
    if replaces:  # nothing is left to train but the entropy/KL terms (0 for the OPSD authors')
        if head.entropy_coef == 0.0 and head.kl_coef == 0.0:
            for a, b in zip(no_teacher.parameters(), policy.parameters()):
                assert torch.equal(a, b), head_name
            return
        # opsd_sdar keeps the GRPO config's entropy/KL: equal to its own step with coef 0
        silent, _ = one_step(make_head(head_name, coef=0.0), 4, policy)
        for a, b in zip(no_teacher.parameters(), silent.parameters()):
            assert torch.allclose(a, b, atol=1e-6), head_name
        return
    grpo = make_head("grpo", entropy_coef=head.entropy_coef, kl_coef=head.kl_coef)
    plain, _ = one_step(grpo, 4, policy, teacher_prompts=False)
    for a, b in zip(no_teacher.parameters(), plain.parameters()):
        assert torch.allclose(a, b, atol=1e-6), head_name


def test_batch_scope_heads_see_whole_episodes() -> None:
    """agentopsd's per-episode recursion gets the same multipliers whatever the micro-batch."""
    policy = tiny_policy()
    head = make_head("agentopsd")
    config = TrainConfig(grpo=GRPOConfig(kl_coef=0.0, micro_batch_size=3))
    model = copy.deepcopy(policy)
    learner = Learner(model, torch.optim.SGD(model.parameters(), lr=0.1), head,
                      TeacherWeights(model, [], 0.05), config, pad_id=0)
    rows, prompts = synthetic_rows()
    prepared = learner.prepare(rows, prompts, step=0)
    batch = learner._head_batch(prepared, slice(None), prepared.old_logprobs, None, 0)
    batch.advantages = prepared.row_advantages.unsqueeze(1).expand_as(prepared.old_logprobs)
    expected = head.apply(batch).advantages
    assert expected is not None and torch.allclose(prepared.advantages, expected)
    episode0 = [i for i, r in enumerate(rows) if r.traj_id == 0]
    factors = prepared.advantages[episode0, 0] / prepared.row_advantages[episode0]
    assert len(set(round(float(f), 6) for f in factors)) > 1, "the turns got distinct credit"


def test_the_invariance_check_would_catch_a_per_micro_batch_agentopsd(monkeypatch) -> None:
    """Guard on the test's power: run agentopsd per micro-batch (the old trainer) and the split
    episodes' credit, hence the step, changes."""
    policy = tiny_policy()
    whole, _ = one_step("agentopsd", 12, policy)
    head = make_head("agentopsd")
    monkeypatch.setattr(type(head), "scope", "micro_batch")
    split, _ = one_step(head, 3, policy)
    assert any(not torch.allclose(a, b, atol=2e-6, rtol=1e-5)
               for a, b in zip(whole.parameters(), split.parameters()))
