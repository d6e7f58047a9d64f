"""Student prompt limits and the SFT response format (pure text, no model or env)."""

from __future__ import annotations

import pytest
from sdgym_test_params import AVAILABLE_IDS

from agents.prompts import (
    PromptLimits,
    clip_text,
    public_turn,
    response_for_command,
    student_messages,
)

TASK = "Instruction: [SEP] buy a red mug [SEP] Search"
HISTORY = [(TASK, "search[red mug]"), ("Results page " + "x" * 300, "click[b01]")]
ENV = AVAILABLE_IDS[0]  # any installed env: these limits are the same for all (window >= 2)
INFO = {"admissible_actions": [f"click[item {i}]" for i in range(10)], "privileged": {"text": "SECRET"}}


def _user(limits: PromptLimits | None, observation: str = "Item page " + "y" * 900,
          task: str = TASK, env_id: str = ENV) -> str:
    turn = public_turn(env_id, task, 3, HISTORY, observation, INFO, limits)
    return student_messages(turn)[1]["content"]


def test_default_limits_keep_the_env_history_window() -> None:
    text = _user(None)
    assert "Recent history:" in text and "Action: click[b01]" in text
    assert "click[item 9]" in text and "SECRET" not in text


def test_limits_cut_history_observation_and_admissible_list() -> None:
    text = _user(PromptLimits(history=0, observation_chars=100, max_admissible=3))
    assert "Recent history:" not in text
    assert "click[item 2]" in text and "click[item 3]" not in text
    current = text.split("Current observation: ")[1].split("\n")[0]
    assert len(current) == 100 and current.endswith("...")
    one = _user(PromptLimits(history=1, history_chars=50))
    assert "Action: click[b01]" in one and "Action: search[red mug]" not in one
    assert "x" * 60 not in one


def test_repeated_task_text_is_referenced_not_repeated() -> None:
    text = _user(None, observation=TASK)
    assert text.count("buy a red mug") == 1


TASK_LINES = ["First line of the task text.", "Second line: buy a red mug.", "Last line: kitchen."]


@pytest.mark.parametrize("env_id", AVAILABLE_IDS)
def test_repeat_task_ends_the_prompt_with_the_env_s_task_statement(env_id: str) -> None:
    """The line the env names as its task statement (ScienceWorld: the first, before the start
    room; Search-QA: the last, the question after the instructions) is repeated as the prompt's
    last line, cut like the task; an env that names none makes it a clear error."""
    from sdgym.registration import env_class

    line = env_class(env_id).task_statement_line
    task = "\n".join(TASK_LINES)
    if line is None:
        with pytest.raises(ValueError, match=f"{env_id} declares no task statement line"):
            _user(PromptLimits(repeat_task=True), task=task, env_id=env_id)
        return
    statement = TASK_LINES[line]
    text = _user(PromptLimits(repeat_task=True), task=task, env_id=env_id)
    assert text.splitlines()[-1] == f"Task, again: {statement}"
    assert text.count(statement) == 2 and all(text.count(other) == 1 for other in TASK_LINES
                                              if other != statement)
    assert not _user(None, task=task, env_id=env_id).splitlines()[-1].startswith("Task, again")
    cut = _user(PromptLimits(repeat_task=True, observation_chars=20), task=task, env_id=env_id)
    assert cut.splitlines()[-1] == f"Task, again: {clip_text(statement, 20)}"


def test_unknown_limit_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown prompt limits"):
        PromptLimits.from_dict({"observations": 3})
    assert PromptLimits.from_dict({"history": 0}).history == 0


@pytest.mark.parametrize("command, tags, expected", [
    ("<answer>Veasuss</answer>", ("search", "answer"), "<answer> Veasuss</answer>"),
    ("<search> a b </search>", ("search", "answer"), "<search> a b</search>"),
    ("click[buy now]", (), "<action> click[buy now]</action>"),
])
def test_response_puts_a_space_after_the_opening_tag(command, tags, expected) -> None:
    response = response_for_command("sdgym/SearchQA-v0", command, tags)
    assert response.endswith(expected)
