"""Rollout engine: grouped lock-step episodes, consistent rows, no privileged text in prompts."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("transformers")

import torch  # noqa: E402
from sdgym_test_params import AVAILABLE_IDS, FAST_KWARGS  # noqa: E402

from agents.backends.base import SamplingParams, render_chat  # noqa: E402
from agents.backends.hf import HFBackend  # noqa: E402
from agents.backends.scoring import response_logprobs  # noqa: E402
from agents.model_loading import load_model  # noqa: E402
from agents.prompts import PublicTurn, public_turn, student_messages, teacher_messages  # noqa: E402
from agents.rollout import RolloutEngine, RolloutEngineConfig  # noqa: E402
from agents.tiny_model import build_tiny_model  # noqa: E402

ROLLOUT_IDS = [i for i in ("sdgym/SearchQA-v0", "sdgym/WebShop-v0") if i in AVAILABLE_IDS]


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    torch.set_num_threads(1)
    path = build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")
    model, tokenizer = load_model(path)
    return HFBackend(model, tokenizer)


def test_public_turn_has_no_privileged_field() -> None:
    names = {f.name for f in dataclasses.fields(PublicTurn)}
    assert not names & {"privileged", "info", "goal", "expert_plan"}
    turn = public_turn("sdgym/SearchQA-v0", "task", 1, [], "obs",
                       {"admissible_actions": None, "privileged": {"text": "SECRET"}})
    assert "SECRET" not in str(student_messages(turn))
    assert "SECRET" in str(teacher_messages(turn, "SECRET"))
    long = teacher_messages(turn, "x" * 5000, budget_chars=100)[1]["content"]
    assert long.count("x") <= 100


@pytest.mark.parametrize("env_id", ROLLOUT_IDS)
def test_grouped_rollout_rows_are_consistent(backend, env_id) -> None:
    config = RolloutEngineConfig(env_id, dict(FAST_KWARGS[env_id]), num_groups=2, group_size=4,
                           max_turns=3)
    render = lambda messages: render_chat(backend.tokenizer, messages)  # noqa: E731
    with RolloutEngine(config, backend, render) as engine:
        batch = engine.collect([5, 6], SamplingParams(max_new_tokens=16, temperature=1.0, seed=3))
    assert len(batch.episodes) == 8 and batch.timings["generation"] > 0
    assert len(batch.rows) == sum(e.turns for e in batch.episodes)
    for group in (0, 1):
        tasks = {e.task_id for e in batch.episodes if e.group_id == group}
        assert len(tasks) == 1, "a group shares one task"
    by_traj: dict[int, list] = {}
    for row in batch.rows:
        by_traj.setdefault(row.traj_id, []).append(row)
        assert len(row.old_logprobs) == len(row.response_ids) > 0
        assert row.privileged is not None
        prompt = backend.tokenizer.decode(row.prompt_ids)
        assert row.privileged["text"] not in prompt
        assert "Gold answer" not in prompt and "expert" not in prompt.lower()
    for rows in by_traj.values():
        assert [r.turn for r in rows] == list(range(len(rows)))
        assert [r.done for r in rows] == [False] * (len(rows) - 1) + [True]
        assert len({r.episode_return for r in rows}) == 1
    sample = batch.rows[:6]
    with torch.no_grad():
        recomputed, _, mask = response_logprobs(
            backend.model, [r.prompt_ids for r in sample], [r.response_ids for r in sample],
            pad_token_id=backend.tokenizer.pad_token_id)
    for row, values, keep in zip(sample, recomputed, mask):
        assert torch.allclose(values[keep], torch.tensor(row.old_logprobs), atol=1e-4)


def test_rollout_rejects_wrong_seed_count(backend) -> None:
    config = RolloutEngineConfig("sdgym/SearchQA-v0", {"size": "tiny"}, num_groups=2, group_size=1)
    render = lambda messages: render_chat(backend.tokenizer, messages)  # noqa: E731
    with RolloutEngine(config, backend, render) as engine, pytest.raises(ValueError, match="seeds"):
        engine.collect([1], SamplingParams(max_new_tokens=4))
