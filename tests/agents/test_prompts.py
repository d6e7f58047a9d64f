"""Student prompt limits and the SFT response format (pure text, no model or env)."""

from __future__ import annotations

import pytest
from sdgym_test_params import AVAILABLE_IDS

from agents.prompts import (
    PromptLimits,
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


def test_repeat_task_ends_the_prompt_with_the_task_statement_cut_like_the_first() -> None:
    """ScienceWorld states its task on the first line, then describes the start room; Search-QA
    puts the question last, after its instructions: the statement alone is repeated."""
    repeat = PromptLimits(repeat_task=True)
    sw = _user(repeat, task=f"{TASK}\n\nThis room is called the kitchen.",
               env_id="sdgym/ScienceWorld-v0")
    assert sw.splitlines()[-1] == f"Task, again: {TASK}" and sw.count("kitchen") == 1
    qa = _user(repeat, task=f"Use search[...].\n{TASK}", env_id="sdgym/SearchQA-v0")
    assert qa.splitlines()[-1] == f"Task, again: {TASK}" and qa.count("search[...]") == 1
    assert _user(None).splitlines()[-1].startswith("Admissible actions:")
    cut = _user(PromptLimits(repeat_task=True, observation_chars=20),
                env_id="sdgym/ScienceWorld-v0").splitlines()
    assert cut[-1] == "Task, again: " + cut[0].removeprefix("Task: ")
    assert len(cut[-1]) == len("Task, again: ") + 20


def test_repeat_task_on_an_env_that_names_no_task_statement_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="WebShop-v0 declares no task statement line"):
        _user(PromptLimits(repeat_task=True), env_id="sdgym/WebShop-v0")


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
