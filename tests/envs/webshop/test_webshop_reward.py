"""WebShop reward factors, each tested alone on hand-written cases."""

from __future__ import annotations

import pytest

from sdgym.envs.webshop import reward
from sdgym.envs.webshop.reward import (
    attribute_reward,
    fuzzy_match,
    fuzzy_score,
    heuristic_nouns,
    normalize_color,
    option_reward,
    price_reward,
    purchase_reward,
    type_reward,
)


def _product(**overrides: object) -> dict:
    product = {
        "query": "shampoo",
        "product_category": "beauty › hair care › shampoo",
        "name": "Lumora Argan Oil Shampoo",
        "Title": "Lumora Argan Oil Shampoo",
        "Attributes": ["sulfate free", "argan oil"],
        "BulletPoints": ["Gentle on color treated hair."],
        "Description": "Made with natural ingredients.",
    }
    product.update(overrides)
    return product


def _goal(**overrides: object) -> dict:
    goal = {
        "query": "shampoo",
        "product_category": "beauty › hair care › shampoo",
        "name": "Lumora Argan Oil Shampoo",
        "attributes": ["sulfate free"],
        "goal_options": ["16.9 fl oz"],
        "price_upper": 30.0,
    }
    goal.update(overrides)
    return goal


def _nouns(text: str) -> list[str]:
    """A fixed noun extractor so type-factor tests do not depend on the backend."""
    return text.lower().split()


# --------------------------------------------------------------------------- fuzzy
def test_fuzzy_score_processes_like_thefuzz() -> None:
    assert fuzzy_score("Essential Oils!", "essential oils") == 100
    assert fuzzy_score("tea tree", "tea tree oil") == 100  # token subset
    assert fuzzy_score("", "anything") == 0


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("essential oil", "essential oils", True),  # 96
        ("pack of 2", "pack of 12", True),  # 87.5 rounds to 88 > 85: upstream's quirk
        ("16.9 fl oz", "6.76 fl oz", False),
        ("tea bag", "tea tree", False),
    ],
)
def test_fuzzy_threshold(a: str, b: str, expected: bool) -> None:
    assert fuzzy_match(a, b) is expected


def test_threshold_is_strict_after_rounding() -> None:
    from rapidfuzz import fuzz

    a, b = "a" * 29, "a" * 29 + "b" * 10  # raw score 58 / 68 = 85.29, rounded to 85
    assert 85 < fuzz.token_set_ratio(a, b) < 85.5
    assert fuzzy_score(a, b) == 85
    assert not fuzzy_match(a, b)


# --------------------------------------------------------------------------- colour
def test_normalize_color_takes_first_colour_in_upstream_order() -> None:
    assert normalize_color("light blue") == "blue"  # "blue" precedes "light"
    assert normalize_color("navy") == "navy"
    assert normalize_color("pack of 2") == "pack of 2"


# --------------------------------------------------------------------------- type
def test_type_reward_exact_match() -> None:
    result = type_reward(_product(), _goal(), nouns=_nouns)
    assert result == {
        "r_type": 1.0,
        "query_match": True,
        "category_match": True,
        "title_score": 1.0,
    }


@pytest.mark.parametrize(
    ("category", "match"),
    [
        ("hair care › beauty › x", True),
        ("a › b › c", False),
        ("beauty › beauty › x", False),
        ("beauty › x › shampoo", True),
    ],
)
def test_category_match_needs_two_shared_segments(category: str, match: bool) -> None:
    result = type_reward(_product(product_category=category), _goal(), nouns=_nouns)
    assert result["category_match"] is match


def test_type_reward_levels() -> None:
    goal = _goal(name="a b c d e f g h i j k")
    other = {"query": "tv", "product_category": "x › y"}
    # no query/category match, title score 0.2 (not > 0.2): halved
    assert type_reward(_product(**other, name="a b"), goal, nouns=_nouns)["r_type"] == 0.5
    # title score 0.3 is a match on its own
    assert type_reward(_product(**other, name="a b c"), goal, nouns=_nouns)["r_type"] == 1.0
    # title score below 0.1 -> 0.1 even with a query match
    assert (
        type_reward(_product(name="zz a"), _goal(name=" ".join("abcdefghijkl")), nouns=_nouns)[
            "r_type"
        ]
        == 0.1
    )
    # title score 0 -> 0 even with query and category matches
    assert type_reward(_product(name="zz"), goal, nouns=_nouns)["r_type"] == 0.0


def test_goal_name_without_nouns_scores_point_two() -> None:
    result = type_reward(_product(), _goal(name=""), nouns=_nouns)
    assert result["title_score"] == 0.2 and result["r_type"] == 1.0


def test_heuristic_nouns_drop_function_and_unit_words() -> None:
    assert heuristic_nouns("Set of 2 Argan Oil Shampoo, 16.9 fl oz, for Dry Hair") == [
        "argan",
        "oil",
        "shampoo",
        "dry",
        "hair",
    ]


@pytest.mark.skipif(reward.NOUN_BACKEND != "spacy", reason="spaCy + en_core_web_sm not installed")
@pytest.mark.parametrize(
    "name",
    ["Lumora Argan Oil Shampoo", "Velvet Matte Lipstick", "Wireless Mouse - Silent Click"],
)
def test_heuristic_agrees_with_spacy_on_product_nouns(name: str) -> None:
    assert set(reward.spacy_nouns(name)) <= set(heuristic_nouns(name))


# --------------------------------------------------------------------------- attributes
def test_attribute_reward_fuzzy_against_attributes() -> None:
    goal = _goal(attributes=["tea tree", "essential oils", "natural ingredients"])
    product = _product(Attributes=["tea tree", "essential oil", "natural ingredients"])
    assert attribute_reward(product, goal) == (1.0, 3)


def test_attribute_reward_falls_back_to_text_fields() -> None:
    goal = _goal(attributes=["tea tree", "essential oils", "natural ingredients", "vegan"])
    product = _product(
        Attributes=[],
        Title="Tea Tree Shampoo",
        BulletPoints=["Smells great, with essential oils"],
        Description="Made with natural ingredients.",
    )
    assert attribute_reward(product, goal) == (0.75, 3)


def test_attribute_reward_no_match() -> None:
    goal = _goal(attributes=["tea tree"])
    product = _product(Attributes=["tea bag"], Title="Earl Grey", BulletPoints=[], Description="")
    assert attribute_reward(product, goal) == (0.0, 0)


# --------------------------------------------------------------------------- options
def test_option_reward_cases() -> None:
    assert option_reward(["pack of 12", "grey", "xl"], ["grey", "xl", "pack of 12"]) == (1.0, 3)
    assert option_reward(["pack of 12", "blue", "xl"], ["grey", "xl", "pack of 12"]) == (2 / 3, 2)
    assert option_reward(["powder snow"], ["cool powder snow"]) == (1.0, 1)
    assert option_reward(["sky blue"], ["navy blue"]) == (1.0, 1)  # both normalise to "blue"
    assert option_reward(["a", "b"], []) == (None, 0)


# --------------------------------------------------------------------------- price, total
def test_price_reward_is_inclusive() -> None:
    assert price_reward(30.0, 30.0) and not price_reward(30.01, 30.0)


def test_total_reward_formula() -> None:
    goal = _goal(attributes=["sulfate free", "vegan"], goal_options=["16.9 fl oz"])
    total, info = purchase_reward(_product(), goal, 20.0, {"size": "16.9 fl oz"})
    assert total == pytest.approx(3 / 4)  # attrs 1/2, option 1/1, price 1 -> 3 of 4
    assert info["r_att"] == 0.5 and info["r_option"] == 1.0 and info["r_price"]
    total, _ = purchase_reward(_product(), goal, 50.0, {})
    assert total == pytest.approx(1 / 4)
    total, _ = purchase_reward(_product(name="zz"), goal, 20.0, {"size": "16.9 fl oz"})
    assert total == 0.0  # r_type 0 (no shared title nouns)


def test_goal_options_as_dict_are_values() -> None:
    goal = _goal(goal_options={"size": "16.9 fl oz"}, attributes=["sulfate free"])
    total, _ = purchase_reward(_product(), goal, 20.0, {"size": "16.9 fl oz"})
    assert total == 1.0
