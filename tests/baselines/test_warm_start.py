"""The SFT warm-start cache key is derived from the config: every field SFT reads is in it."""

from __future__ import annotations

import dataclasses

import pytest

from baselines.config import SECTIONS, TrainConfig, load_preset, replace_settings, sft_inputs
from baselines.warm_start import sft_cache_key, warm_start

TAGGED = {f.name for f in dataclasses.fields(TrainConfig) if f.metadata.get("sft_input")} | {
    f"{section}.{f.name}" for section, cls in SECTIONS.items() for f in dataclasses.fields(cls)
    if f.metadata.get("sft_input")}
"""Dotted paths of every field (of the config and its sections) tagged as an SFT input."""
WHEN_SET = {f"{section}.{f.name}" for section, cls in SECTIONS.items()
            for f in dataclasses.fields(cls) if f.metadata.get("keyed_when_set")}
"""Those keyed only where set away from their default (added after warm starts were shipped)."""


class RecordingConfig:
    """A config (or one of its sections) that records the dotted paths of the fields read."""

    def __init__(self, config, read: set[str] | None = None, prefix: str = "") -> None:
        self.__dict__.update(_config=config, read=set() if read is None else read, prefix=prefix)

    def __getattr__(self, name: str):
        value = getattr(self._config, name)
        if dataclasses.is_dataclass(value):
            return RecordingConfig(value, self.read, f"{self.prefix}{name}.")
        self.read.add(f"{self.prefix}{name}")
        return value


def test_warm_start_reads_only_fields_that_enter_the_cache_key(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path / "cache"))
    config = load_preset("cpu-smoke", {"sft.steps": 1, "sft.tasks": 2, "sft.batch_size": 2},
                         out_dir=str(tmp_path / "runs"))
    recording = RecordingConfig(config)
    folder = warm_start(recording)
    assert folder.parent == tmp_path / "cache" / "sft" and folder.name == sft_cache_key(config)
    assert {"sft.steps", "env_id", "model.name"} <= recording.read
    assert recording.read <= TAGGED, f"untagged SFT inputs: {recording.read - TAGGED}"


def test_the_tagged_fields_are_the_sft_inputs() -> None:
    assert set(sft_inputs(load_preset("cpu-smoke"))) == TAGGED - WHEN_SET
    assert set(sft_inputs(load_preset("cpu-smoke", {"sft.detour_rate": 0.25,
                                                    "sft.swap_words": [["a", "b"]]}))) >= WHEN_SET
    assert {"sft.steps", "sft.teacher_contexts", "model.tiny", "rollout.prompt"} <= TAGGED


@pytest.mark.parametrize("name", sorted(TAGGED))
def test_every_sft_input_changes_the_key(name) -> None:
    config = load_preset("cpu-smoke")
    changed = {"env_id": "sdgym/WebShop-v0", "env_kwargs": {"size": "small"},
               "model.tiny": {"num_layers": 2}, "rollout.prompt": {"history": 1},
               "sft.teacher_contexts": ["skills"], "model.name": "other-model",
               "sft.detour_rate": 0.25, "sft.swap_words": [["red", "blue"]]}
    value = changed.get(name)
    if value is None:
        old = sft_inputs(config)[name]
        value = (old + 1) if isinstance(old, int) else (old + 0.5) if isinstance(old, float) \
            else f"{old}-other"
    try:
        other = replace_settings(config, {name: value})
    except ValueError as error:  # e.g. an env that is not installed here
        pytest.skip(str(error))
    assert sft_inputs(other)[name] == value
    assert sft_cache_key(other) != sft_cache_key(config)


def test_options_sft_does_not_read_leave_the_key_alone() -> None:
    config = load_preset("cpu-smoke")
    for change in ({"method": "sdar"}, {"grpo.lr": 1e-2}, {"steps": 7},
                   {"evaluation.val_episodes": 3}, {"rollout.num_groups": 3}):
        assert sft_cache_key(replace_settings(config, change)) == sft_cache_key(config)


def test_a_fine_tune_is_cached_per_base_weights(tmp_path, monkeypatch) -> None:
    import shutil

    from agents.warm_starts import shipped_warm_starts
    from baselines.warm_start import sft_cache_folder

    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path / "cache"))
    base = tmp_path / "base"
    shutil.copytree(shipped_warm_starts()["searchqa-easy-sft"], base)
    config = load_preset("searchqa-hasty-warm-start", {"model.name": str(base)})
    before = sft_cache_folder(config)
    assert before.name.startswith(sft_cache_key(config) + "-")
    weights = next(base.glob("*.safetensors"))
    weights.write_bytes(weights.read_bytes() + b"\0")  # a rebuilt base: new weights, same name
    assert sft_cache_folder(config) != before
    assert sft_cache_key(config) == sft_cache_key(load_preset("searchqa-hasty-warm-start",
                                                              {"model.name": str(base)}))
    assert sft_cache_folder(load_preset("cpu-smoke")).name == sft_cache_key(load_preset("cpu-smoke"))
