"""Mixed precision: dtype names, bfloat16 loading, and a bfloat16 training step on CPU whose
log-probs and update stay within bfloat16 tolerance of the float32 ones (float32 master weights,
gradients and AdamW states; one shared bfloat16 copy for the frozen reference and teacher)."""

from __future__ import annotations

import copy

import pytest
import torch

pytest.importorskip("transformers")

from test_learner import synthetic_rows, tiny_policy  # noqa: E402

from agents.backends.scoring import response_logprobs  # noqa: E402
from agents.model_loading import load_model, resolve_dtype  # noqa: E402
from agents.warm_starts import resolve_model  # noqa: E402
from baselines.config import InfraConfig, ModelConfig, TrainConfig  # noqa: E402
from baselines.grpo import GRPOConfig  # noqa: E402
from baselines.heads import make_head  # noqa: E402
from baselines.learner import UPDATE_BUCKET_COST, Learner  # noqa: E402
from baselines.precision import Precision  # noqa: E402
from baselines.teacher import TeacherWeights  # noqa: E402

WARM_START = "searchqa-easy-sft"  # a shipped 1M-parameter model folder (float16 on disk)


def test_dtype_names() -> None:
    assert resolve_dtype("auto", "cpu") == torch.float32
    assert resolve_dtype("auto", "cuda") == torch.bfloat16
    assert resolve_dtype("auto", "cuda:1") == torch.bfloat16
    assert resolve_dtype("bf16", "cpu") == torch.bfloat16
    assert resolve_dtype("float32", "cuda") == torch.float32
    with pytest.raises(ValueError, match="dtype must be one of"):
        resolve_dtype("float8")
    with pytest.raises(ValueError, match="dtype must be one of"):
        TrainConfig(model=ModelConfig(dtype="half"))
    with pytest.raises(ValueError, match="sharding"):
        TrainConfig(infra=InfraConfig(sharding="zero3"))


def _logprobs(model: torch.nn.Module, precision: Precision) -> torch.Tensor:
    prompts = [[5, 6, 7, 8, 9, 10], [11, 12, 13]]
    responses = [[20, 21, 22, 23], [30, 31]]
    with torch.no_grad(), precision.autocast():
        logprobs, _, mask = response_logprobs(model, prompts, responses, pad_token_id=0,
                                              share_prompts=True, bucket_cost=UPDATE_BUCKET_COST)
    assert logprobs.dtype == torch.float32  # log_softmax always runs on float32 logits
    return logprobs[mask]


def test_bfloat16_loading_and_autocast_match_float32() -> None:
    folder = resolve_model(WARM_START)
    full, _ = load_model(folder, dtype="float32")
    half, tokenizer = load_model(folder, dtype="bfloat16")
    assert {p.dtype for p in full.parameters()} == {torch.float32}
    assert {p.dtype for p in half.parameters()} == {torch.bfloat16}
    assert tokenizer.padding_side == "left"
    reference = _logprobs(full, Precision())
    for model, precision in ((half, Precision()), (full, Precision(torch.bfloat16, "cpu"))):
        values = _logprobs(model, precision)
        assert torch.isfinite(values).all()
        difference = float((values - reference).abs().max())
        # bfloat16 keeps 8 significant bits: log-probs of about -1..-10 move by a few 0.01
        assert 0 < difference < 0.15, difference


def _step(dtype: str) -> tuple[torch.nn.Module, dict, TeacherWeights, torch.optim.Optimizer]:
    model = copy.deepcopy(tiny_policy())
    config = TrainConfig(model=ModelConfig(dtype=dtype),
                         grpo=GRPOConfig(kl_coef=0.05, entropy_coef=0.01, micro_batch_size=4,
                                         max_grad_norm=1e9))
    head = make_head("opsd", teacher_weights="frozen")
    precision = Precision.for_run(dtype, "cpu")
    teachers = TeacherWeights(model, ["frozen", head.teacher_weights], head.ema_decay,
                              frozen_dtype=precision.compute)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    learner = Learner(model, optimizer, head, teachers, config, pad_id=0, precision=precision)
    rows, prompts = synthetic_rows()
    prepared = learner.prepare(rows, prompts, step=1)
    metrics = learner.train_epoch(prepared, step=1)
    return model, metrics, teachers, optimizer


def test_bfloat16_training_step_keeps_float32_master_state_and_matches_float32() -> None:
    start = tiny_policy()
    full, full_metrics, _, _ = _step("float32")
    half, metrics, teachers, optimizer = _step("bfloat16")
    for key in ("loss", "policy_loss", "entropy", "kl"):
        assert torch.isfinite(torch.tensor(metrics[key])), key
        assert metrics[key] == pytest.approx(full_metrics[key], rel=0.05, abs=0.02), key
    # master weights, gradients and AdamW moments stay float32
    assert {p.dtype for p in half.parameters()} == {torch.float32}
    assert {p.grad.dtype for p in half.parameters() if p.grad is not None} == {torch.float32}
    moments = [t for s in optimizer.state.values() for k, t in s.items() if k != "step"]
    assert moments and {t.dtype for t in moments} == {torch.float32}
    # the frozen reference and the frozen teacher are one bfloat16 copy
    assert list(teachers.networks()) == ["frozen"]
    assert teachers.model("frozen", half) is teachers.frozen
    assert {p.dtype for p in teachers.frozen.parameters()} == {torch.bfloat16}
    # the update moved the weights like the float32 one (Adam's first step ~ lr * sign(g))
    before = {name: p.detach() for name, p in start.named_parameters()}
    for (name, a), (_, b) in zip(half.named_parameters(), full.named_parameters()):
        moved_half, moved_full = a.detach() - before[name], b.detach() - before[name]
        assert float(moved_half.abs().max()) > 1e-4, name
        agree = float((torch.sign(moved_half) == torch.sign(moved_full)).float().mean())
        assert agree > 0.9, (name, agree)
