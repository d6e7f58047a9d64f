"""The trainer with ``rollout.pool = "ray"``: env actors for training and validation, Ray closed after."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")
ray = pytest.importorskip("ray")

from baselines.config import load_preset  # noqa: E402
from baselines.run_log import read_metrics  # noqa: E402
from baselines.trainer import Trainer  # noqa: E402


@pytest.mark.slow
def test_training_step_with_ray_env_workers(tmp_path) -> None:
    if ray.is_initialized():
        pytest.skip("Ray already running in this process")
    config = load_preset("cpu-smoke", {"sft.steps": 4, "sft.tasks": 8, "rollout.num_groups": 2, "rollout.group_size": 2, "evaluation.val_episodes": 2, "rollout.max_new_tokens": 12, "rollout.pool": "ray", "rollout.ray_num_workers": 2}, out_dir=str(tmp_path / "runs"), steps=1)
    trainer = Trainer(config)
    try:
        summary = trainer.fit()
        assert type(trainer.engine.pool).__name__ == "RayEnvPool"
        assert len(trainer.engine.pool.workers) == 2
        assert type(trainer.validation_engine.pool).__name__ == "RayEnvPool"
    finally:
        trainer.close()
    assert not ray.is_initialized()  # the trainer started Ray, so closing it shuts Ray down
    records = [r for r in read_metrics(trainer.run_dir) if "step" in r]
    assert [r["step"] for r in records] == [0, 1] and records[1]["train/turns"] >= 1
    assert [s for s, _ in summary["validation"]] == [0, 1]


def test_bad_rollout_options_fail_when_the_config_is_made(tmp_path) -> None:
    with pytest.raises(ValueError, match="rollout.pool"):
        load_preset("cpu-smoke", {"rollout.pool": "dask"})
    with pytest.raises(ValueError, match="ray_num_workers"):
        load_preset("cpu-smoke", {"rollout.pool": "ray", "rollout.ray_num_workers": 0})
