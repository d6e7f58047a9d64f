"""Presets: one name per file, ``extends`` instead of copies, types and choices checked on load."""

from __future__ import annotations

import dataclasses

import pytest

from baselines.config import PRESET_DIR, TrainConfig, flat_settings, load_preset, read_preset


def test_a_child_preset_is_its_base_plus_its_own_values(tmp_path) -> None:
    (tmp_path / "base.toml").write_text('description = "base"\nsteps = 5\n'
                                        '[grpo]\nlr = 0.01\nkl_coef = 0.5\nclip_low = 0.1\n')
    (tmp_path / "child.toml").write_text('description = "child"\nextends = "base"\nsteps = 7\n'
                                         '[grpo]\nkl_coef = 0.0\n')
    assert read_preset(tmp_path / "child.toml", PRESET_DIR, "training") == {
        "description": "child", "steps": 7, "grpo": {"lr": 0.01, "kl_coef": 0.0, "clip_low": 0.1}}
    config = load_preset(str(tmp_path / "child.toml"))
    assert (config.steps, config.grpo.lr, config.grpo.kl_coef, config.grpo.clip_low) == (7, 0.01, 0.0, 0.1)


def test_paper_presets_differ_from_their_env_preset_in_the_model_and_its_layout_only() -> None:
    """A size preset sets the model and what the memory plan needs for it (FSDP for 4B, FSDP
    and gradient checkpointing for 9B), nothing else."""
    layout = {"2b": {}, "4b": {"infra.sharding": "fsdp"},
              "9b": {"infra.sharding": "fsdp", "infra.gradient_checkpointing": True}}
    for env in ("alfworld", "scienceworld", "searchqa", "webshop"):
        base = flat_settings(load_preset(f"paper-qwen3.5-{env}").to_dict())
        for size in ("2b", "4b", "9b"):
            child = flat_settings(load_preset(f"paper-qwen3.5-{size}-{env}").to_dict())
            changed = {k: child[k] for k in child if child[k] != base[k]}
            assert child["model.name"] == f"Qwen/Qwen3.5-{size.upper()}"
            assert {k: v for k, v in changed.items() if k != "model.name"} == layout[size]
            assert child["model.name"] == f"Qwen/Qwen3.5-{size.upper()}"


def test_an_extends_loop_is_an_error_naming_it(tmp_path) -> None:
    (tmp_path / "a.toml").write_text('extends = "b"\n')
    (tmp_path / "b.toml").write_text('extends = "a"\n')
    with pytest.raises(ValueError, match="loop: a -> b -> a"):
        load_preset(str(tmp_path / "a.toml"))


@pytest.mark.parametrize(("text", "message"), [
    ('extends = "cpu-smoke"\nsteps = "3"\n', r"^steps must be an integer, got '3'$"),
    ('extends = "cpu-smoke"\n[sft]\nteacher_contexts = "skills"\n',
     r"^sft.teacher_contexts must be a list of strings, got 'skills'$"),
    ('extends = "cpu-smoke"\n[grpo]\nkl_coef = "0"\n', r"^grpo.kl_coef must be a number"),
    ('extends = "cpu-smoke"\n[grpo]\nadvantage_scope = "trajectory"\n',
     r"^grpo.advantage_scope must be one of \('episode', 'turn'\), got 'trajectory'$"),
    ('extends = "cpu-smoke"\nmethod = "sdar"\n[head]\nteacher_weights = "old"\n',
     "teacher_weights must be one of"),
    ('extends = "cpu-smoke"\nmethod = "sdar"\n[head]\ncolour = 1\n',
     "head options for method 'sdar'"),
    ('extends = "cpu-smoke"\nmethod = "nope"\n', "unknown method 'nope'"),
    ('extends = "cpu-smoke"\n[infra]\nwandb_mode = "cloud"\n', "infra.wandb_mode must be one of"),
    ('extends = "cpu-smoke"\n[sft]\nsteps = -1\n', r"^sft.steps must be >= 0, got -1$"),
    ('extends = "cpu-smoke"\nsft_steps = 3\n', r"^preset bad: sft_steps is now sft.steps"),
    ('extends = "cpu-smoke"\n[sft]\nstepz = 3\n', r"^unknown sft options \['stepz'\]$"),
])
def test_train_preset_types_and_choices_are_checked_when_the_config_is_built(
        tmp_path, text, message) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as raised:
        load_preset(str(path))
    assert "\n" not in str(raised.value)


def test_the_config_checks_also_guard_direct_construction() -> None:
    with pytest.raises(ValueError, match="advantage_scope"):
        dataclasses.replace(load_preset("cpu-smoke").grpo, advantage_scope="x")
    with pytest.raises(ValueError, match="seed must be an integer"):
        TrainConfig(seed="0")


def test_dotted_overrides_merge_one_key_of_a_table() -> None:
    from baselines.config import dotted_settings

    settings = {"grpo.lr": 1e-3, "grpo.kl_coef": 0.02, "env.size": "small",
                "head.teacher_weights": "frozen", "rollout.prompt.history": 1}
    assert [parts for parts, _ in dotted_settings(settings)] == [
        ("grpo", "lr"), ("grpo", "kl_coef"), ("env_kwargs", "size"), ("head", "teacher_weights"),
        ("rollout", "prompt", "history")]
    config = load_preset("cpu-mini", settings)
    base = load_preset("cpu-mini")
    assert (config.grpo.lr, config.grpo.kl_coef, config.env_kwargs["size"]) == (1e-3, 0.02, "small")
    assert config.head == {"teacher_weights": "frozen"}
    assert config.rollout.prompt == {**base.rollout.prompt, "history": 1}  # other keys kept
    assert config.grpo.clip_low == base.grpo.clip_low
    with pytest.raises(ValueError, match="'foo' is not a table of the training config"):
        dotted_settings({"foo.bar": 1})
    from sdgym.cli import parse_env_kwargs

    assert parse_env_kwargs(["val_teacher=true", "a=false", "b=True", "c=word"]) == {
        "val_teacher": True, "a": False, "b": True, "c": "word"}
