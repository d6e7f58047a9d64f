"""The head registry: names, configs, flags, and a smoke run of every head."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
import torch

from baselines.heads import HEADS, available_heads, make_head, register_head
from baselines.heads.base import Head, HeadBatch, HeadOutput

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


RECORD_FIRST = ["name", "scope", "teacher_weights", "context", "ema_decay", "context_budget_chars"]
"""The keys a head's config starts with (run fingerprints hash it: the order stays)."""


@pytest.mark.parametrize("name", ["grpo", *TEN])
def test_every_head_is_a_dataclass_whose_config_is_its_knobs(name: str) -> None:
    from baselines.config_options import field_docs

    cls = HEADS[name]
    assert dataclasses.is_dataclass(cls) and "__dataclass_fields__" in vars(cls)  # declared
    knobs = [item.name for item in dataclasses.fields(cls) if item.init]
    assert knobs[:6] == [f.name for f in dataclasses.fields(Head)]  # base knobs first, in order
    head = make_head(name)
    head.scratch = 1  # an attribute that is not a field is not part of the head's config
    config = head.config()
    assert list(config) == [*RECORD_FIRST, *(k for k in knobs if k not in RECORD_FIRST)]
    assert all(config[k] == getattr(head, k) for k in knobs if k not in ("teacher_weights",
                                                                        "context"))
    documented = set().union(*(field_docs(c) for c in cls.__mro__
                               if "__dataclass_fields__" in vars(c)))
    assert set(knobs) <= documented, "every knob has a docstring under its field"
    assert set(cls.reference) - set(knobs) == {k for k in cls.reference if "." in k}


INVALID = [(name, knob, value) for name in TEN
           for knob, value in (("teacher_weights", "bogus"), ("context", "nowhere"))] + [
    ("opsd", "loss", "kl"), ("opsd", "beta", 1.5), ("opsd", "loss_temperature", 0.0),
    ("sdpo", "no_teacher_rows", "drop"), ("sdft", "direction", "sideways"),
    ("sdft", "skip_tokens", -1), ("agentopsd", "v0", "median"), ("pcsd", "window", 0)]


@pytest.mark.parametrize(("name", "knob", "value"), INVALID)
def test_an_invalid_knob_value_is_a_value_error_naming_the_knob(name, knob, value) -> None:
    with pytest.raises(ValueError, match=knob):
        make_head(name, **{knob: value})


@pytest.mark.parametrize("name", ["grpo", *TEN])
def test_an_unknown_knob_is_a_value_error_naming_it_and_the_heads_knobs(name: str) -> None:
    with pytest.raises(ValueError, match=r"has no knob 'colour' \(its knobs: teacher_weights, "):
        make_head(name, colour=1)
    with pytest.raises(TypeError):  # what a bad keyword argument was before (and config checks)
        make_head(name, colour=1)


def test_a_head_class_not_declared_as_a_dataclass_is_refused() -> None:
    plain = type("PlainHead", (Head,), {"name": "plain_head"})
    with pytest.raises(ValueError, match="PlainHead must be a Head subclass declared with "
                                         "@dataclass"):
        register_head(plain)
    assert "plain_head" not in HEADS


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
