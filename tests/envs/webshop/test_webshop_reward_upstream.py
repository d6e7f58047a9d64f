"""The reward under upstream WebShop's names, on the cases of upstream's own
``tests/web-agent-site/engine/test_goal.py`` (values re-stated, not code copied).

Upstream tags title nouns with spaCy's ``en_core_web_sm``; where that is not installed the
heuristic backend runs (see :mod:`sdgym.envs.webshop.reward`) and the title-score cases are
checked to the reward band upstream's thresholds put them in (which decides ``r_type``), with
the deviation from upstream's value bounded."""

from __future__ import annotations

from math import isclose

import pytest

from sdgym.envs.webshop import reward
from sdgym.envs.webshop.reward import (
    get_attribute_reward,
    get_option_reward,
    get_reward,
    get_type_reward,
)

SHOES = "Mens D.O.N. Issue 2 Gca Basketball Sneakers Shoes Casual - Off White"
PEAK = (
    "PEAK High Top Mens Basketball Shoes Lou Williams Streetball Master Breathable Non Slip "
    "Outdoor Sneakers"
)
CORD = "Saireed UL Listed 2 Prong Power Cord for JBL Bar 3.1 Bar 2.1 Channel 4K Ultra HD Soundbar"
BRST = (
    "BRST AC Power Cord Outlet Socket Cable Plug Lead for Panasonic SC-HT830V DVD/VCR Combo Home "
    "Theater System"
)
KNOB = "Rusticware 921ORB Kitchen and Bath Cabinet Knob"
TWEEZERS = (
    "Minkissy 2pcs Stainless Steel Eyebrow Tweezers Blackhead Acne Remover Portable Makeup "
    "Tweezers (Silver)"
)


def _type(purchased: dict, goal: dict) -> dict:
    return get_type_reward(purchased, goal)


def test_get_type_reward_query_and_category() -> None:
    goal = {"query": "Query 1", "product_category": "a › b › c", "name": "Name 1"}
    purchased = dict(goal)
    result = _type(purchased, goal)
    assert result == {"r_type": 1.0, "query_match": True, "category_match": True, "title_score": 1}
    purchased["query"] = "Query 2"
    assert _type(purchased, goal)["query_match"] is False
    for category, match in [
        ("b › c › a", True),
        ("d › e › f", False),
        ("a › d › b", True),
        ("a › a › b", True),
        ("a › a › d", False),
    ]:
        purchased["product_category"] = category
        assert _type(purchased, goal)["category_match"] is match, category


def _band(score: float) -> str:
    """Which ``r_type`` level upstream's thresholds give a title score (other signals off)."""
    return "zero" if score == 0 else "0.1" if score < 0.1 else "0.5" if score <= 0.2 else "1"


@pytest.mark.parametrize(
    ("goal_name", "purchased_name", "upstream"),
    [
        (SHOES, PEAK, 0.333),
        (CORD + " Home Theater System Subwoofer", BRST, 0.3),
        (CORD, BRST, 0.15),
    ],
)
def test_get_type_reward_title_scores(goal_name: str, purchased_name: str, upstream: float) -> None:
    goal = {"query": "q", "product_category": "a › b › c", "name": goal_name}
    purchased = {"query": "other", "product_category": "d › e", "name": purchased_name}
    result = _type(purchased, goal)
    if reward.NOUN_BACKEND == "spacy":
        assert isclose(result["title_score"], upstream, abs_tol=1e-2)
    else:
        assert _band(result["title_score"]) == _band(upstream)
        assert abs(result["title_score"] - upstream) < 0.04
    assert result["r_type"] == (1.0 if upstream > 0.2 else 0.5)


def test_get_type_reward_unrelated_names() -> None:
    goal = {"query": "q", "product_category": "a", "name": KNOB}
    purchased = {"query": "q", "product_category": "a", "name": TWEEZERS}
    assert _type(purchased, goal)["title_score"] < 0.05


GOAL_ATTRIBUTES = {"attributes": ["tea tree", "essential oils", "natural ingredients"]}


@pytest.mark.parametrize(
    ("purchased", "expected"),
    [
        ({"Attributes": ["tea tree", "essential oil", "natural ingredients"]}, (1, 3)),
        (
            {
                "Attributes": ["essential oil", "natural ingredients"],
                "Title": "",
                "BulletPoints": [],
                "Description": "",
            },
            (2 / 3, 2),
        ),
        (
            {
                "Attributes": [],
                "Title": "",
                "BulletPoints": ["This shampoo has essential oils and smells like lemons"],
                "Description": "Best shampoo on the market, made with natural ingredients",
            },
            (2 / 3, 2),
        ),
        (
            {
                "Attributes": ["tea bag", "earl gray", "lipton"],
                "Title": "English tea for breakfast",
                "BulletPoints": ["Soothing aroma", "Calming, great feeling"],
                "Description": "Best tea made by Lipton, great to pair with breakfast",
            },
            (0, 0),
        ),
    ],
)
def test_get_attribute_reward(purchased: dict, expected: tuple) -> None:
    assert get_attribute_reward(purchased, GOAL_ATTRIBUTES) == expected


@pytest.mark.parametrize(
    ("purchased", "goal", "expected"),
    [
        (["pack of 12", "grey", "XL"], ["grey", "XL", "pack of 12"], (1, 3)),
        (["pack of 12", "blue", "XL"], ["grey", "XL", "pack of 12"], (2 / 3, 2)),
        (["pack of 12", "powder snow", "XL"], ["cool powder snow", "XL", "pack of 12"], (1, 3)),
        (["goal 1", "goal 2"], [], (None, 0)),
        ([], ["goal 1", "goal 2"], (0, 0)),
    ],
)
def test_get_option_reward(purchased: list, goal: list, expected: tuple) -> None:
    assert get_option_reward(purchased, goal) == expected


def test_get_reward_returns_a_number_through_upstreams_variations() -> None:
    goal = {
        "query": "Query 1",
        "product_category": "a › b › c",
        "name": SHOES,
        "attributes": ["tea tree", "essential oils", "natural ingredients"],
        "goal_options": {"color": "grey", "size": "XL"},
        "price_upper": 40.00,
    }
    purchased = {
        "query": "Query 1",
        "product_category": "a › b › c",
        "name": SHOES,
        "Attributes": ["tea tree", "essential oil", "natural ingredients"],
        "Title": "",
        "BulletPoints": [],
        "Description": "",
    }
    options = {"color": "grey", "size": "XL"}
    assert get_reward(purchased, goal, 35, options) == 1
    # attributes only in the text fields; upstream's case passes BulletPoints as a string
    purchased.update(
        Attributes=[],
        BulletPoints="This shampoo has essential oils and smells like lemons",
        Description="Best shampoo on the market, made with natural ingredients",
    )
    assert isclose(get_reward(purchased, goal, 35, options), 2 / 3, abs_tol=1e-2)
    goal["goal_options"] = {"color": "grey", "size": "XL", "amount": "pack of 12"}
    assert isclose(get_reward(purchased, goal, 35, options), 0.5714, abs_tol=1e-2)
    goal["name"], purchased["name"] = CORD, BRST
    purchased.update(query="Query 2", product_category="a › d › e")
    total = get_reward(purchased, goal, 35, options)
    assert isinstance(total, float) and isclose(total, 0.2857, abs_tol=1e-2)
    verbose_total, info = get_reward(purchased, goal, 35, options, verbose=True)
    assert verbose_total == total and info["r_type"] == 0.5
