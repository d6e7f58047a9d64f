"""The head registry: names, configs, flags, and a smoke run of every head."""

from __future__ import annotations

import json
import math

import pytest
import torch

from baselines.heads import HEADS, available_heads, make_head
from baselines.heads.base import HeadBatch, HeadOutput

TEN = ["agentopsd", "grpo_opsd", "opid", "opsd", "opsd_sdar", "pcsd", "rlsd", "sdar", "sdft",
       "sdpo", "skill_sd"]


def test_available_heads_lists_grpo_and_the_ten_plus_sdars_opsd() -> None:
    assert available_heads() == ["grpo", *TEN]


def test_unknown_head_raises() -> None:
    with pytest.raises(ValueError, match="unknown method"):
        make_head("no_such_head")


@pytest.mark.parametrize("name", TEN)
def test_config_is_json_and_names_teacher(name: str) -> None:
    head = make_head(name)
    config = json.loads(json.dumps(head.config()))
    assert config["name"] == name
    assert config["teacher_weights"] in ("current", "frozen", "ema")
    assert config["context"] in ("privileged", "skills", "sibling", "hindsight", "demonstration")
    assert HEADS[name].needs_teacher
    assert HEADS[name].needs_logits == (name in ("sdpo", "sdft", "opsd"))
    assert HEADS[name].scope == ("batch" if name in ("rlsd", "agentopsd", "opid") else "micro_batch")
    overridden = make_head(name, teacher_weights="frozen").config()
    assert overridden["teacher_weights"] == "frozen"
    with pytest.raises(ValueError):
        make_head(name, teacher_weights="bogus")


@pytest.mark.parametrize("name", TEN)
def test_every_head_runs_on_a_random_batch(name: str) -> None:
    gen = torch.Generator().manual_seed(0)
    rows, tokens, vocab = 4, 5, 7
    logits = torch.randn(rows, tokens, vocab, generator=gen, requires_grad=True)
    sampled = torch.randint(0, vocab, (rows, tokens), generator=gen)
    student = torch.log_softmax(logits, -1).gather(-1, sampled.unsqueeze(-1)).squeeze(-1)
    teacher_logits = torch.randn(rows, tokens, vocab, generator=gen)
    teacher = torch.log_softmax(teacher_logits, -1).gather(-1, sampled.unsqueeze(-1)).squeeze(-1)
    mask = torch.ones(rows, tokens)
    mask[:, -1] = 0.0
    batch = HeadBatch(
        student_logprobs=student,
        old_logprobs=student.detach() + 0.01,
        advantages=torch.tensor([1.0, -1.0, 0.5, -0.5]).unsqueeze(-1).expand(rows, tokens),
        mask=mask,
        teacher_logprobs=teacher,
        has_teacher=torch.tensor([True, True, False, True]),
        student_logits=logits,
        teacher_logits=teacher_logits,
        group_ids=[0, 0, 0, 0],
        traj_ids=[0, 0, 1, 1],
        turn_ids=[0, 1, 0, 1],
        won=[True, True, False, False],
        group_success_rate=[0.5] * 4,
        step=3,
    )
    out = make_head(name).apply(batch)
    assert isinstance(out, HeadOutput)
    assert any(x is not None for x in (out.advantages, out.aux_loss, out.replace_loss))
    assert out.metrics and all(
        isinstance(v, float) and math.isfinite(v) for v in out.metrics.values()
    )
    assert all(k.startswith(f"{name}/") for k in out.metrics)
    if out.advantages is not None:
        assert out.advantages.shape == (rows, tokens) and not out.advantages.requires_grad
        assert torch.all(out.advantages[:, -1] == 0)
    loss = out.replace_loss if out.replace_loss is not None else out.aux_loss
    if loss is not None:
        assert loss.dim() == 0 and loss.requires_grad


@pytest.mark.parametrize("module", ["opsd", "sdpo"])
def test_head_module_imports_first_without_cycle(module: str) -> None:
    import subprocess
    import sys

    code = f"import baselines.heads.{module}; from baselines.heads import HEADS; print(len(HEADS))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(done.stdout.strip()) >= 2


def test_training_docs_show_the_current_reference_table() -> None:
    from pathlib import Path

    from baselines.heads import reference_table

    page = (Path(__file__).resolve().parents[3] / "docs" / "training.md").read_text()
    assert reference_table() in page, "docs/training.md's head table is stale: paste reference_table()"
