"""Typed ``sdgym train`` options from the config's sections, ``--set`` paths, old flat names."""

from __future__ import annotations

import json

import pytest

from baselines.config import LEGACY_NAMES, flat_settings, from_dict, load_preset
from baselines.train_cli import _config
from sdgym.cli import build_parser, main


def config_from(argv: list[str]):
    args = build_parser("train").parse_args(["train", "--preset", "cpu-smoke", *argv])
    return _config(args, check_model=False)


def test_typed_options_set_the_section_fields_and_head_knobs() -> None:
    config = config_from(["--method", "sdar", "--sft.steps", "200", "--grpo.kl-coef", "0.01",
                          "--head.teacher-weights", "frozen", "--rollout.pool", "ray",
                          "--evaluation.val-teacher", "false", "--sft.teacher-contexts",
                          "privileged,skills", "--rollout.ray-address", "none"])
    assert (config.sft.steps, config.grpo.kl_coef, config.rollout.pool) == (200, 0.01, "ray")
    assert config.head == {"teacher_weights": "frozen"} and config.evaluation.val_teacher is False
    assert config.sft.teacher_contexts == ["privileged", "skills"]
    assert config.rollout.ray_address is None
    base = load_preset("cpu-smoke")
    assert config.sft.tasks == base.sft.tasks and config.grpo.clip_low == base.grpo.clip_low


@pytest.mark.parametrize(("argv", "message"), [
    (["--sft.steps", "abc"], "error: --sft.steps: expected an integer, got 'abc'"),
    (["--grpo.kl-coef", "x"], "error: --grpo.kl-coef: expected a number, got 'x'"),
    (["--evaluation.val-teacher", "maybe"],
     "error: --evaluation.val-teacher: expected true or false, got 'maybe'"),
    (["--rollout.pool", "dask"], "error: rollout.pool must be one of ('local', 'ray'), got 'dask'"),
    (["--set", "sft.stepz=3"], "error: sft.stepz: 'stepz' is not an option of sft"),
])
def test_a_bad_value_is_one_line_naming_the_option(capsys, argv, message) -> None:
    assert main(["train", "--preset", "cpu-smoke", "--dry-run", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and "\n" not in err


def test_set_takes_dotted_paths_and_maps_the_old_flat_names(capsys) -> None:
    config = config_from(["--set", "sft.steps=7", "--set", "env.size=small",
                          "--set", "rollout.prompt.history=1"])
    assert (config.sft.steps, config.env_kwargs["size"], config.rollout.prompt["history"]) == (
        7, "small", 1)
    old = config_from(["--set", "sft_steps=7", "--set", "rollout_backend=ray", "--set",
                       "model=other", "--set", "prompt.history=1", "--set", "lr=0.001"])
    assert (old.sft.steps, old.rollout.pool, old.model.name) == (7, "ray", "other")
    assert (old.rollout.prompt["history"], old.grpo.lr) == (1, 0.001)
    assert "note: --set sft_steps is now --set sft.steps" in capsys.readouterr().err


def test_old_flat_records_are_read_into_the_sections() -> None:
    config = load_preset("cpu-mini")
    flat = {"model": config.model.name, "sft_steps": 3, "lr": 0.01, "rollout_backend": "local",
            "prompt": dict(config.rollout.prompt), "val_every": 2, "head_kwargs": {},
            "env_id": config.env_id, "env_kwargs": dict(config.env_kwargs)}
    old = from_dict(flat)
    assert (old.model.name, old.sft.steps, old.grpo.lr, old.evaluation.val_every) == (
        config.model.name, 3, 0.01, 2)
    assert old.rollout.prompt == config.rollout.prompt
    assert set(LEGACY_NAMES) >= {"sft_steps", "lr", "val_every", "rollout_backend"}
    recorded = flat_settings({**flat, "head": {"name": "grpo"}})
    assert recorded["sft.steps"] == 3 and recorded["head"] == {"name": "grpo"}


def test_resuming_a_run_recorded_with_flat_names_still_compares_every_setting(tmp_path) -> None:
    from baselines.trainer import check_resume_settings

    config = load_preset("cpu-smoke", out_dir=str(tmp_path))
    recorded = {**{k: v for k, v in flat_settings(config.to_dict()).items() if "." not in k},
                "lr": 0.5, "num_groups": config.rollout.num_groups, "steps": 99}
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.json").write_text(json.dumps(recorded, default=str))
    with pytest.raises(ValueError, match=r"grpo.lr: 0.5 -> 0.0003"):
        check_resume_settings(config, run_dir)
