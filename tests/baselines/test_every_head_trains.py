"""Every registered method runs a real training step through the trainer (teacher forward included)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("transformers")

from baselines.config import load_preset  # noqa: E402
from baselines.heads import available_heads  # noqa: E402
from baselines.run_log import read_metrics  # noqa: E402
from baselines.trainer import Trainer  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["sdgym/SearchQA-v0", "sdgym/WebShop-v0"])
@pytest.mark.parametrize("method", available_heads())
def test_one_step_per_method(tmp_path, method, env_id) -> None:
    config = load_preset("cpu-smoke", env_id=env_id, method=method, out_dir=str(tmp_path),
                         env_kwargs={"size": "tiny"}, sft_steps=2, sft_tasks=4, steps=1,
                         num_groups=1, group_size=2, val_every=1, val_episodes=1,
                         max_new_tokens=8, train_split="train", val_split="val",
                         head_kwargs={"teacher_weights": "frozen"} if method == "sdar" else {})
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
    else:
        assert phases["teacher_forward"] == 0
