"""The per-GPU memory plan: its parameter/gradient/optimizer bytes are what PyTorch allocates,
paper presets are planned from shipped configs (no download), and a run that cannot fit stops
before loading anything with one line saying what to change."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

from test_learner import synthetic_rows, tiny_policy  # noqa: E402

from baselines.config import ModelConfig, TrainConfig, load_preset, replace_settings  # noqa: E402
from baselines.grpo import GRPOConfig  # noqa: E402
from baselines.heads import make_head  # noqa: E402
from baselines.learner import Learner  # noqa: E402
from baselines.memory_plan import (  # noqa: E402
    GIB,
    MemoryPlanError,
    check_fits,
    model_shape,
    plan_memory,
    shape_from_config,
)
from baselines.teacher import TeacherWeights  # noqa: E402

H200 = (141 * GIB, "test")


def _bytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def test_parameter_gradient_and_optimizer_bytes_equal_what_pytorch_allocates() -> None:
    model = tiny_policy()
    config = TrainConfig(model=ModelConfig(dtype="bfloat16"),
                         grpo=GRPOConfig(kl_coef=0.05, micro_batch_size=4))  # the KL term needs the frozen copy
    head = make_head("grpo")
    teachers = TeacherWeights(model, ["frozen"], head.ema_decay, frozen_dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    learner = Learner(model, optimizer, head, teachers, config, pad_id=0)
    rows, _ = synthetic_rows()
    learner.train_epoch(learner.prepare(rows, None, step=1), step=1)
    plan = plan_memory(config, 1, shape=shape_from_config(model.config, "tiny"), gpu=H200)
    lines = plan.lines
    assert lines["parameters (float32 master)"] == _bytes(model.parameters())
    assert lines["gradients (float32)"] == _bytes(p.grad for p in model.parameters())
    state = [t for s in optimizer.state.values() for t in s.values()]
    assert len(optimizer.state) == len(list(model.parameters()))
    assert lines["optimizer (AdamW, float32)"] == _bytes(state)
    assert lines["frozen reference/teacher (16-bit)"] == _bytes(teachers.frozen.parameters())
    assert "EMA teacher (float32)" not in lines  # no head here uses one


def test_fsdp_divides_the_sharded_states_by_the_world_size() -> None:
    config = replace_settings(load_preset("paper-qwen3.5-9b-alfworld"),
                              {"infra.sharding": "replicated", "infra.gradient_checkpointing": False})
    shape = model_shape(config.model.name)
    assert 8.5e9 < shape.parameters < 9.5e9  # from the shipped config: nothing downloaded
    single = plan_memory(config, 1, gpu=H200).lines
    sharded = plan_memory(replace_settings(config, {"infra.sharding": "fsdp"}), 8, gpu=H200).lines
    for key in ("parameters (float32 master)", "gradients (float32)"):
        assert sharded[key] == 4 * -(-shape.parameters // 8) and single[key] == 4 * shape.parameters
    assert sharded["frozen reference/teacher (16-bit)"] * 8 == pytest.approx(
        single["frozen reference/teacher (16-bit)"], abs=16)
    checkpointed = plan_memory(replace_settings(config, {"infra.gradient_checkpointing": True}), 1,
                               gpu=H200)
    key = next(k for k in single if k.startswith("activations"))
    assert checkpointed.lines[key] < single[key] / 5


def test_a_run_that_cannot_fit_refuses_with_one_line_saying_what_to_change(tmp_path) -> None:
    from baselines.trainer import Trainer

    config = replace_settings(load_preset("paper-qwen3.5-9b-alfworld", out_dir=str(tmp_path)),
                              {"infra.gpu_memory_gib": 141, "infra.sharding": "replicated",
                               "infra.gradient_checkpointing": False})
    with pytest.raises(MemoryPlanError) as error:
        Trainer(config)  # stops before loading the model or writing the run folder
    message = str(error.value)
    assert "\n" not in message and "Qwen/Qwen3.5-9B" in message
    assert "infra.sharding='fsdp' on" in message and "infra.gradient_checkpointing=True" in message
    assert not any(tmp_path.iterdir())
    fitted = replace_settings(config, {"infra.sharding": "fsdp",
                                       "infra.gradient_checkpointing": True})
    assert check_fits(fitted, world_size=8).fits
    assert check_fits(replace_settings(config, {"infra.device": "cpu"})) is None  # CPU: not checked


def test_train_dry_run_prints_the_plan(capsys) -> None:
    from sdgym.cli import main

    assert main(["train", "--preset", "paper-qwen3.5-2b-searchqa", "--dry-run", "--gpus", "2",
                 "--infra.gpu-memory-gib", "141"]) == 0
    out = capsys.readouterr().out
    assert "memory plan: Qwen/Qwen3.5-2B, 2 GPU(s), replicated" in out
    for line in ("parameters", "gradients", "optimizer", "frozen reference", "activations",
                 "logits", "vLLM engine", "total"):
        assert line in out, line
