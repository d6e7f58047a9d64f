"""The trainer: a smoke run logs every phase, checkpoints are atomic, resume is exact."""

from __future__ import annotations

import json

import pytest
import torch

from agents.model_loading import load_model
from baselines.checkpoint import load_latest, save_checkpoint
from baselines.config import available_presets, load_preset
from baselines.cost import PHASES
from baselines.episode_log import TEST_EPISODES_FILE, read_episodes
from baselines.run_log import TAG_GROUPS, read_metrics, scalar_tags
from baselines.trainer import Trainer

pytest.importorskip("transformers")


def tiny_config(tmp_path, settings=None, **overrides):
    values = {"sft.steps": 4, "sft.tasks": 8, "rollout.num_groups": 2, "rollout.group_size": 2,
              "rollout.max_new_tokens": 12, "evaluation.val_episodes": 2,
              "evaluation.test_episodes": 2, "evaluation.test_seeds": 2,
              "evaluation.val_every": 1, "infra.checkpoint_every": 1, **(settings or {})}
    return load_preset("cpu-smoke", values, **{"out_dir": str(tmp_path / "runs"), "steps": 2,
                                               **overrides})


def test_presets_load_and_reject_unknown_options() -> None:
    assert {"cpu-smoke", "cpu-mini"} <= set(available_presets())
    assert load_preset("cpu-mini", method="sdar").method == "sdar"
    with pytest.raises(ValueError, match="unknown training options"):
        load_preset("cpu-smoke", learning_rate=1.0)
    with pytest.raises(ValueError, match="unknown preset"):
        load_preset("nope")


def test_smoke_run_logs_phases_validation_and_summary(tmp_path) -> None:
    trainer = Trainer(tiny_config(tmp_path))
    try:
        summary = trainer.fit()
        final = trainer.evaluate()
    finally:
        trainer.close()
    records = read_metrics(trainer.run_dir)
    assert [r["step"] for r in records] == [0, 1, 2]
    assert all(set(PHASES) <= set(r["phase_seconds"]) for r in records)
    assert records[1]["phase_seconds"]["generation"] > 0 and records[1]["phase_seconds"]["update"] > 0
    assert "val/success" in records[2] and "loss" in records[1]
    tags = scalar_tags({k: v for k, v in records[2].items() if k not in ("step", "time")})
    assert {t.split("/")[0] for t in tags} <= set(TAG_GROUPS)
    assert {"train/loss", "val/success", "timing/wall_seconds/update",
            "timing/cpu_seconds/generation", "cost/tokens/generated"} <= set(tags)
    assert [s for s, _ in summary["validation"]] == [0, 1, 2]
    assert 0.0 <= summary["auc"] <= 1.0 and summary["tokens"]["generated"] > 0
    assert len(final["success_per_seed"]) == 2
    # the TensorBoard event file holds the final test score, and no all-zero timing curve
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(trainer.run_dir / "tensorboard"))
    events.Reload()
    scalars = set(events.Tags()["scalars"])
    [test_point] = events.Scalars("test/success")
    assert test_point.step == 2 and test_point.value == pytest.approx(final["success_mean"])
    assert "timing/wall_seconds/update" in scalars
    assert "timing/wall_seconds/teacher_forward" not in scalars  # GRPO: 0 at every step
    after = trainer.summary()  # the test is timed too, but, like setup and validation, not cost
    cpu = after["phase_cpu_seconds_total"]
    assert cpu["setup"] > 0 and cpu["validation"] > 0 and cpu["test"] > 0
    assert after["train_cpu_seconds"] == pytest.approx(sum(
        v for k, v in cpu.items() if k not in ("setup", "sft", "validation", "test")))
    assert after["train_cpu_seconds"] == pytest.approx(summary["train_cpu_seconds"])
    config = json.loads((trainer.run_dir / "config.json").read_text())
    assert config["head"]["name"] == "grpo" and config["teacher_forward_counts_as_cost"] is True


def test_the_test_panel_records_its_episodes_once_and_changes_no_outcome(tmp_path) -> None:
    """``test_episodes.jsonl``: every (task, rollout seed) episode of the panel; a test run
    again (a resumed or retried cell) rewrites it; recording none gives the same outcomes."""
    trainer = Trainer(tiny_config(tmp_path, steps=0))
    try:
        final = trainer.evaluate()
        recorded = read_episodes(trainer.run_dir, TEST_EPISODES_FILE)
        again = trainer.evaluate()
        assert read_episodes(trainer.run_dir, TEST_EPISODES_FILE) == recorded
        trainer.config.infra.test_episodes_mb = 0
        unrecorded = trainer.evaluate()
        assert not (trainer.run_dir / TEST_EPISODES_FILE).exists()
    finally:
        trainer.close()
    assert final["outcomes"] == again["outcomes"] == unrecorded["outcomes"]
    assert sorted((e["task_index"], e["rollout_seed"], e["won"], len(e["turns"]))
                  for e in recorded) == sorted((o["task_index"], o["rollout_seed"], o["success"],
                                                o["turns"]) for o in final["outcomes"])
    assert all(e["panel"] == "test" and e["step"] == 0 for e in recorded)


@pytest.mark.slow
def test_resume_continues_exactly(tmp_path) -> None:
    straight = Trainer(tiny_config(tmp_path / "a"))
    try:
        straight.fit()
    finally:
        straight.close()
    first = Trainer(tiny_config(tmp_path / "b", steps=1))
    try:
        first.fit()
    finally:
        first.close()
    resumed = Trainer(tiny_config(tmp_path / "b", steps=2), resume=True)
    try:
        assert resumed.step == 1
        resumed.fit()
    finally:
        resumed.close()
    a, b = read_metrics(straight.run_dir), read_metrics(resumed.run_dir)
    assert [r["step"] for r in b] == [0, 1, 2]
    for key in ("loss", "train/score", "grad_norm"):
        assert a[2][key] == pytest.approx(b[2][key], abs=1e-6), key
    for p, q in zip(straight.model.parameters(), resumed.model.parameters()):
        assert torch.allclose(p, q, atol=1e-6)


def test_interrupted_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch) -> None:
    save_checkpoint(tmp_path, 1, {"step": 1, "w": torch.ones(2)})

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("killed during save")

    monkeypatch.setattr(torch, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(tmp_path, 2, {"step": 2, "w": torch.zeros(2)})
    monkeypatch.undo()
    state = load_latest(tmp_path)
    assert state["step"] == 1 and torch.equal(state["w"], torch.ones(2))
    assert not [p for p in (tmp_path / "checkpoints").iterdir() if p.name.startswith(".step")]


def test_tempered_policy_rescores_old_logprobs_at_the_sampling_temperature(tmp_path) -> None:
    """``tempered_logprobs``: the PPO denominators are the tempered policy's, so the first
    update's ratio is 1 (nothing clipped), whereas raw rollout log-probs would differ."""
    from agents.backends.scoring import response_logprobs
    from baselines.learner import UPDATE_BUCKET_COST

    trainer = Trainer(tiny_config(tmp_path, {"rollout.temperature": 2.0, "grpo.tempered_logprobs": True, "sft.steps": 2}))
    try:
        assert trainer.policy_temperature == 2.0
        batch = trainer.engine.collect(trainer._group_seeds(1), trainer._sampling(1, 2.0), "easy_train")
        prepared = trainer.learner.prepare(batch.rows, None, 1)
        rows, rescored = prepared.rows, prepared.old_logprobs  # rows in the learner's order
        with torch.no_grad():
            options = {"pad_token_id": trainer.pad_id, "share_prompts": True,
                       "bucket_cost": UPDATE_BUCKET_COST}  # the learner's forward
            raw, raw_logits, mask = response_logprobs(
                trainer.model, [r.prompt_ids for r in rows], [r.response_ids for r in rows], **options)
            tempered, _, _ = response_logprobs(
                trainer.model, [r.prompt_ids for r in rows], [r.response_ids for r in rows], **options,
                temperature=2.0)
        expected = torch.log_softmax(raw_logits / 2.0, dim=-1)
        for i, row in enumerate(rows):
            n = len(row.response_ids)
            assert torch.allclose(rescored[i, :n], tempered[i, :n], atol=1e-5)
            ids = torch.tensor(row.response_ids)
            assert torch.allclose(tempered[i, :n], expected[i, torch.arange(n), ids], atol=1e-5)
            assert torch.allclose(torch.tensor(row.old_logprobs), raw[i, :n], atol=1e-3)
        assert not torch.allclose(tempered[mask], raw[mask], atol=1e-2)
        metrics = trainer.update(batch, 1)
        assert metrics["ratio_mean"] == pytest.approx(1.0, abs=1e-4)
        assert metrics["clip_fraction"] == 0.0
    finally:
        trainer.close()
    plain = Trainer(tiny_config(tmp_path / "plain", {"rollout.temperature": 2.0, "sft.steps": 2}))
    try:
        assert plain.policy_temperature == 1.0
    finally:
        plain.close()


def test_vllm_backend_samples_with_the_trained_weights_after_every_update(tmp_path, monkeypatch) -> None:
    """``backend="vllm"``: the trainer builds a colocated engine and syncs it after every update
    and on resume. The engine here is a second copy of the model (no vLLM, no GPU), so rollouts
    come from weights that only the sync can keep current."""
    import baselines.trainer as trainer_module
    from agents.backends.hf import HFBackend

    class CopyEngine(HFBackend):
        def __init__(self, model_dir: str, kwargs: dict) -> None:
            model, tokenizer = load_model(model_dir)
            super().__init__(model, tokenizer)
            self.kwargs, self.syncs = kwargs, 0

        def sync_weights(self, model) -> None:
            self.model.load_state_dict(model.state_dict())
            self.syncs += 1

    engines: list[CopyEngine] = []

    def colocated(model_dir: str, *, seed: int, tokenizer, **kwargs) -> CopyEngine:
        engines.append(CopyEngine(model_dir, {"seed": seed, **kwargs}))
        return engines[-1]

    monkeypatch.setattr(trainer_module, "colocated_vllm", colocated)
    config = tiny_config(tmp_path, {"rollout.backend": "vllm", "rollout.vllm_kwargs": {"gpu_memory_utilization": 0.5}})
    trainer = Trainer(config)
    try:
        start = {k: v.clone() for k, v in trainer.model.state_dict().items()}
        trainer.fit()
        assert engines[0].syncs == config.steps
        assert engines[0].kwargs == {"seed": config.seed, "dtype": "float32",
                                     "gpu_memory_utilization": 0.5}
        trained = trainer.model.state_dict()
        assert any(not torch.equal(start[k], trained[k]) for k in trained)
        copy = engines[0].model.state_dict()
        assert all(torch.equal(copy[k], trained[k]) for k in trained)
        assert all(r["phase_seconds"]["weight_sync"] > 0 for r in read_metrics(trainer.run_dir)[1:])
    finally:
        trainer.close()
    resumed = Trainer(config, resume=True)
    try:
        assert engines[1].syncs == 1
        copy = engines[1].model.state_dict()
        assert all(torch.equal(copy[k], v) for k, v in trained.items())
    finally:
        resumed.close()


def test_unknown_backend_is_rejected() -> None:
    with pytest.raises(ValueError, match="backend must be 'hf' or 'vllm'"):
        load_preset("cpu-smoke", {"rollout.backend": "sglang"})
    with pytest.raises(ValueError, match="not 'openai': samples from a remote server are off-policy"):
        load_preset("cpu-smoke", {"rollout.backend": "openai"})


@pytest.mark.parametrize(("override", "message"), [
    ({"steps": -3}, "steps must be >= 0"),
    ({"rollout.group_size": 0}, "rollout.group_size must be >= 1"),
    ({"grpo.lr": "abc"}, "grpo.lr must be a number"),
    ({"rollout.num_groups": 2.5}, "rollout.num_groups must be an integer"),
    ({"grpo.lr": 0.0}, "grpo.lr must be > 0"),
    ({"env_id": "sdgym/Nope-v0"}, "unknown env_id 'sdgym/Nope-v0'")])
def test_bad_training_options_fail_with_a_message_naming_them(override, message) -> None:
    with pytest.raises(ValueError, match=message):
        load_preset("cpu-smoke", override)


def test_resume_under_other_settings_is_refused(tmp_path) -> None:
    """``--resume --set lr=0.5`` would rewrite config.json while the restored optimizer keeps
    the old learning rate: refused, naming what changed; only steps may change."""
    from baselines.trainer import check_resume_settings

    first = Trainer(tiny_config(tmp_path, steps=1))
    try:
        first.fit()
    finally:
        first.close()
    recorded = (first.run_dir / "config.json").read_text()
    with pytest.raises(ValueError, match=r"grpo.lr: 0.0003 -> 0.5"):
        Trainer(tiny_config(tmp_path, {"grpo.lr": 0.5}, steps=1), resume=True)
    assert (first.run_dir / "config.json").read_text() == recorded  # nothing rewritten
    check_resume_settings(tiny_config(tmp_path, steps=5), first.run_dir)  # more steps: fine


def test_a_moved_run_folder_resumes_from_its_new_place(tmp_path) -> None:
    """``out_dir`` says where a run lives, not how it trains: a run folder moved (or copied) to
    another place resumes there, from its own checkpoint."""
    import shutil

    first = Trainer(tiny_config(tmp_path / "old", steps=1))
    try:
        first.fit()
    finally:
        first.close()
    shutil.move(tmp_path / "old", tmp_path / "new")
    moved = Trainer(tiny_config(tmp_path / "new", steps=2), resume=True)
    try:
        assert moved.step == 1 and moved.run_dir.is_relative_to(tmp_path / "new")
    finally:
        moved.close()
