"""Env splits as ``datasets.Dataset`` tables of tasks (agents.datasets)."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

pytest.importorskip("datasets")

import sdgym  # noqa: E402, F401  (registers the env ids)
from agents.datasets import COLUMNS, prompt_limits_for, task_dataset  # noqa: E402
from agents.prompts import PromptLimits, public_turn, student_messages  # noqa: E402

ENV_ID = "sdgym/SearchQA-v0"
TINY = {"size": "tiny"}


def test_one_row_per_task_with_the_env_and_prompt_builders_first_prompt() -> None:
    limits = PromptLimits(history=0, observation_chars=90)  # short enough to cut the task text
    tasks = task_dataset(ENV_ID, "easy_val", env_kwargs=TINY, limits=limits)
    env = gym.make(ENV_ID, **TINY)
    try:
        assert len(tasks) == env.unwrapped.task_count("easy_val") > 0
        assert tasks.column_names == list(COLUMNS)
        assert tasks["task_index"] == list(range(len(tasks)))
        for row in tasks.select(range(0, len(tasks), 7)):
            observation, info = env.reset(options={"split": "easy_val",
                                                   "task_index": row["task_index"]})
            turn = public_turn(ENV_ID, observation, 1, [], observation, info, limits)
            assert row["prompt"] == student_messages(turn)
            assert "..." in row["prompt"][1]["content"]  # the limits were applied
            assert (row["env_id"], row["split"]) == (ENV_ID, "easy_val")
            assert (row["task_id"], row["task_type"]) == (info["task_id"], info["task_type"])
    finally:
        env.close()


def test_privileged_fields_only_on_request() -> None:
    hidden = task_dataset(ENV_ID, "val", env_kwargs=TINY, task_indices=[4, 2])
    shown = task_dataset(ENV_ID, "val", env_kwargs=TINY, task_indices=[4, 2], privileged=True)
    assert "privileged" not in hidden.column_names
    assert shown.column_names == [*COLUMNS, "privileged"]
    assert hidden["task_index"] == shown["task_index"] == [4, 2]
    assert hidden["prompt"] == shown["prompt"]
    env = gym.make(ENV_ID, **TINY)
    try:
        for row in shown:
            _, info = env.reset(options={"split": "val", "task_index": row["task_index"]})
            privileged = json.loads(row["privileged"])
            assert privileged["goal"]["answers"] == info["privileged"]["goal"]["answers"]
            assert privileged["expert_plan"] == info["privileged"]["expert_plan"]
            gold = info["privileged"]["goal"]["answers"][0]
            assert gold not in json.dumps(hidden[hidden["task_index"].index(row["task_index"])])
    finally:
        env.close()


def test_limits_come_from_the_model_record_unless_given() -> None:
    assert prompt_limits_for("searchqa-hasty-sft") == PromptLimits(history=0, observation_chars=600)
    assert prompt_limits_for("searchqa-hasty-sft", {"history": 3}) == PromptLimits(history=3)
    assert prompt_limits_for(None) == PromptLimits()
    with pytest.raises(ValueError, match="no-such-model"):  # a model that is nowhere is named
        prompt_limits_for("no-such-model")


def test_unknown_split_is_a_one_line_error() -> None:
    with pytest.raises(ValueError, match="unknown split 'nope'.*easy_train"):
        task_dataset(ENV_ID, "nope", env_kwargs=TINY)
