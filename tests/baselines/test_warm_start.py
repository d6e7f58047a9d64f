"""The SFT warm-start cache key is derived from the config: every field SFT reads is in it."""

from __future__ import annotations

import dataclasses

import pytest

from baselines.config import TrainConfig, load_preset, sft_inputs
from baselines.warm_start import sft_cache_key, warm_start

TAGGED = {f.name for f in dataclasses.fields(TrainConfig) if f.metadata.get("sft_input")}


class RecordingConfig:
    """A config that records which fields are read."""

    def __init__(self, config: TrainConfig) -> None:
        self.__dict__["_config"], self.__dict__["read"] = config, set()

    def __getattr__(self, name: str):
        self.read.add(name)
        return getattr(self._config, name)


def test_warm_start_reads_only_fields_that_enter_the_cache_key(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path / "cache"))
    config = load_preset("cpu-smoke", sft_steps=1, sft_tasks=2, sft_batch_size=2,
                         out_dir=str(tmp_path / "runs"))
    recording = RecordingConfig(config)
    folder = warm_start(recording)
    assert folder.parent == tmp_path / "cache" / "sft" and folder.name == sft_cache_key(config)
    assert {"sft_steps", "env_id", "model"} <= recording.read
    assert recording.read <= TAGGED, f"untagged SFT inputs: {recording.read - TAGGED}"


@pytest.mark.parametrize("name", sorted(TAGGED))
def test_every_sft_input_changes_the_key(name) -> None:
    config = load_preset("cpu-smoke")
    changed = {"env_id": "sdgym/WebShop-v0", "env_kwargs": {"size": "small"},
               "tiny_model": {"num_layers": 2}, "prompt": {"history": 1},
               "sft_teacher_contexts": ["skills"], "model": "other-model"}
    value = changed.get(name)
    if value is None:
        old = getattr(config, name)
        value = (old + 1) if isinstance(old, int) else (old + 0.5) if isinstance(old, float) \
            else f"{old}-other"
    try:
        other = dataclasses.replace(config, **{name: value})
    except ValueError as error:  # e.g. an env that is not installed here
        pytest.skip(str(error))
    assert sft_inputs(other)[name] == value
    assert sft_cache_key(other) != sft_cache_key(config)


def test_options_sft_does_not_read_leave_the_key_alone() -> None:
    config = load_preset("cpu-smoke")
    for change in ({"method": "sdar"}, {"lr": 1e-2}, {"steps": 7}, {"val_episodes": 3}):
        assert sft_cache_key(dataclasses.replace(config, **change)) == sft_cache_key(config)
