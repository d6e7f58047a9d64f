"""Every registered method runs a real training step through the trainer (teacher forward included)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("transformers")

from baselines.config import load_preset  # noqa: E402
from baselines.heads import available_heads, make_head  # noqa: E402
from baselines.run_log import read_metrics  # noqa: E402
from baselines.trainer import Trainer  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["sdgym/SearchQA-v0", "sdgym/WebShop-v0"])
@pytest.mark.parametrize("method", available_heads())
def test_one_step_per_method(tmp_path, method, env_id) -> None:
    config = load_preset("cpu-smoke", {"sft.steps": 2, "sft.tasks": 4, "rollout.num_groups": 1, "rollout.group_size": 2, "evaluation.val_every": 1, "evaluation.val_episodes": 1, "rollout.max_new_tokens": 8, "evaluation.val_split": "val", "head": {"teacher_weights": "frozen"} if method == "sdar" else {}}, env_id=env_id, method=method, out_dir=str(tmp_path), env_kwargs={"size": "tiny"}, steps=1, train_split="train")
    trainer = Trainer(config)
    try:
        trainer.fit()
    finally:
        trainer.close()
    step = read_metrics(trainer.run_dir)[-1]
    assert step["step"] == 1 and math.isfinite(step["loss"])
    phases = step["phase_seconds"]
    assert math.isfinite(step["entropy"]), "policy entropy is logged for every method"
    if trainer.head.needs_teacher:
        assert 0.0 <= step["teacher/context_fraction"] <= 1.0
        assert math.isfinite(step["teacher/gap_mean"])
        if step["teacher/context_fraction"] > 0:
            assert phases["teacher_forward"] > 0, "the teacher forward is timed as training cost"
            if trainer.head.wants_logits():
                assert step["teacher/kl_full"] >= 0.0
        assert any(k.startswith("head/") for k in step), "the head logs its diagnostics"
        if trainer.teacher_can_act:  # the teacher's own success, acting with its context
            assert 0.0 <= step["val/teacher_success"] <= 1.0
    else:
        assert phases["teacher_forward"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("method", [h for h in available_heads() if h != "grpo"])
def test_sdgym_train_cpu_smoke_writes_the_teacher_diagnostics(tmp_path, method) -> None:
    """``sdgym train --method <head> --preset cpu-smoke``: metrics.jsonl carries the teacher
    diagnostics every step and config.json the head's deviations from its reference."""
    import json

    from sdgym.cli import main

    code = main(["train", "--method", method, "--preset", "cpu-smoke", "--steps", "1",
                 "--out", str(tmp_path), "--no-eval", "--sft.steps", "2",
                 "--set", "sft.tasks=4", "--evaluation.val-episodes", "2", "--rollout.max-new-tokens", "8"])
    assert code == 0
    run_dir = tmp_path / "SearchQA-v0" / method / "seed0"
    step = read_metrics(run_dir)[-1]
    for key in ("entropy", "teacher/context_fraction", "teacher/gap_mean"):
        assert math.isfinite(step[key]), key
    from baselines.teacher import TURN_CONTEXTS

    if make_head(method).context in TURN_CONTEXTS:  # the teacher acts with a per-turn context
        assert 0.0 <= step["val/teacher_success"] <= 1.0
    config = json.loads((run_dir / "config.json").read_text())
    assert config["head"]["name"] == method
    assert config["head_deviations"] == make_head(method).deviations(config)
    if method == "opsd":  # cpu-smoke samples at T = 1 with lr 3e-4; the recipe: 1.1, 2e-4
        assert "rollout.temperature = 1.0 (reference: 1.1)" in config["head_deviations"]
