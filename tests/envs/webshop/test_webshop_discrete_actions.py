"""WebShop's discrete action set for non-LLM agents (searches from the instruction, slot order)."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import sdgym  # noqa: F401  (registers the ids)
from sdgym.envs.webshop.discrete_actions import (
    BUTTON_ORDER,
    SEARCH_PLACEHOLDER,
    candidate_searches,
    discrete_actions,
)
from sdgym.wrappers import AdmissibleDiscrete, HidePrivileged
from sdgym.wrappers.admissible_discrete import candidate_commands

_QUERY = re.compile(r"^search\[(.*)\]$")


@pytest.fixture
def env() -> gym.Env:
    env = gym.make("sdgym/WebShop-v0", size="tiny")
    yield env
    env.close()


def test_candidate_searches_drop_the_price_clause_and_the_opening() -> None:
    searches = candidate_searches(
        "i need  hands free, bluetooth 5.3 earbuds, and price lower than 210.00 dollars")
    assert searches == [
        "search[i need hands free, bluetooth 5.3 earbuds, and price lower than 210.00 dollars]",
        "search[i need hands free, bluetooth 5.3 earbuds]",
        "search[hands free, bluetooth 5.3 earbuds]",
    ]
    assert candidate_searches("please get me a dolby vision tv")[-1] == "search[dolby vision tv]"
    assert candidate_searches("wool socks") == ["search[wool socks]"]  # no duplicates


def test_discrete_actions_replace_the_placeholder_and_put_buttons_first() -> None:
    admissible = ["click[back to search]", "click[< prev]", "click[red]", "click[reviews]",
                  "click[buy now]"]
    assert discrete_actions("wool socks", admissible) == [
        "click[buy now]", "click[< prev]", "click[back to search]", "click[reviews]", "click[red]"]
    assert discrete_actions("wool socks", [SEARCH_PLACEHOLDER]) == ["search[wool socks]"]


def test_search_candidates_come_from_the_shown_instruction_only(env) -> None:
    for index in range(6):
        observation, info = env.reset(options={"split": "train", "task_index": index})
        assert info["admissible_actions"] == [SEARCH_PLACEHOLDER]
        candidates = candidate_commands(env, observation, info)
        assert SEARCH_PLACEHOLDER not in candidates and 1 <= len(candidates) <= 3
        for command in candidates:  # every query is text the page shows, nothing hidden
            query = _QUERY.match(command).group(1)
            assert query in observation.lower()
        goal = info["privileged"]["goal"]
        assert not any(goal["asin"].lower() in c for c in candidates)


def test_clicks_are_the_admissible_ones_with_fixed_buttons_first(env) -> None:
    observation, info = env.reset(options={"split": "easy_train", "task_index": 0})
    command = candidate_commands(env, observation, info)[0]  # search the whole instruction
    for _page in ("results", "item"):
        observation, _, _, _, info = env.step(command)
        candidates = candidate_commands(env, observation, info)
        assert sorted(candidates) == sorted(info["admissible_actions"])
        buttons = [c for c in candidates if c in BUTTON_ORDER]
        assert buttons and candidates[: len(buttons)] == sorted(buttons, key=BUTTON_ORDER.index)
        command = candidates[len(buttons)]  # the first product link
    assert candidates[0] == "click[buy now]"


def test_the_easy_policy_is_three_slots_and_wins_easy_goals() -> None:
    """Search the whole instruction (slot 0), open the first result, buy (slot 0)."""
    env = AdmissibleDiscrete(HidePrivileged(gym.make("sdgym/WebShop-v0", size="tiny")))
    wins = 0
    for index in range(5):
        env.reset(options={"split": "easy_train", "task_index": index})
        env.step(0)
        first_product = next(i for i, c in enumerate(env.candidates) if c not in BUTTON_ORDER)
        env.step(first_product)
        assert env.candidates[0] == "click[buy now]"
        _, reward, terminated, _, info = env.step(0)
        assert terminated
        wins += info["won"]
    env.close()
    assert wins == 5
