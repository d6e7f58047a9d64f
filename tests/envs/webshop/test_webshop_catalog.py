"""Generated catalogue, goals, splits and the upstream-format loader."""

from __future__ import annotations

from pathlib import Path

import pytest
from webshop_upstream_files import write_upstream_files

from sdgym.envs.webshop.catalog import generated_catalog
from sdgym.envs.webshop.generator import generate_upstream_data
from sdgym.envs.webshop.goals import NO_CEILING, draw_price_ceiling, make_goals, split_of
from sdgym.envs.webshop.loaders import build_catalog, load_upstream, parse_pricing
from sdgym.envs.webshop.taxonomy import CATEGORIES, PRODUCT_TYPES

PRODUCT_KEYS = {
    "asin",
    "name",
    "Title",
    "query",
    "category",
    "product_category",
    "BulletPoints",
    "Description",
    "options",
    "pricing",
    "Price",
    "Attributes",
    "Reviews",
    "Rating",
    "MainImage",
}


def test_tiny_catalog_schema_and_goals_are_achievable() -> None:
    catalog = generated_catalog("tiny")
    assert len(catalog.products) == 300 and len(catalog.goals) >= 150
    assert {p["category"] for p in catalog.products} == set(CATEGORIES)
    for product in catalog.products:
        assert set(product) >= PRODUCT_KEYS
        assert len(product["asin"]) == 10 and product["asin"].startswith("B0")
    for goal in catalog.goals:
        product = catalog.by_asin[goal["asin"]]
        assert set(goal["attributes"]) <= set(product["Attributes"])
        offered = {v for values in product["options"].values() for v in values}
        assert set(goal["goal_options"]) <= offered
        assert catalog.prices[goal["asin"]] <= goal["price_upper"]
        assert goal["instruction_text"].startswith(("i ", "i'm ", "find", "please"))


def test_generation_is_deterministic_and_seeded() -> None:
    assert generate_upstream_data(50, seed=3) == generate_upstream_data(50, seed=3)
    assert generate_upstream_data(50, seed=3)[0] != generate_upstream_data(50, seed=4)[0]


def test_held_out_test_goals_leave_every_other_goal_as_it_was() -> None:
    """The held-out stream only appends test goals: the catalogue without it has the same
    products and goals, in the same order, and each split's goals are a prefix of the new."""
    data = generate_upstream_data(2000, seed=0)
    without = build_catalog(data.products, data.instructions, data.attributes)
    with_held_out = build_catalog(data.products, data.instructions, data.attributes,
                                  test_instructions=data.test_instructions)
    assert with_held_out.products == without.products
    assert with_held_out.goals[:len(without.goals)] == without.goals
    for split in ("train", "val"):
        assert with_held_out.goals_by_split[split] == without.goals_by_split[split]
    extra = with_held_out.goals[len(without.goals):]
    assert len(extra) == sum(len(v) for v in data.test_instructions.values())
    assert 0.2 * 2000 < len(extra) < 0.3 * 2000  # about a quarter of the products
    assert {goal["split"] for goal in extra} == {"test"}
    assert all(goal["goal_id"] == f"{goal['asin']}-t0" for goal in extra)
    own_texts = {(g["asin"], g["instruction_text"]) for g in without.goals}
    assert not {(g["asin"], g["instruction_text"]) for g in extra} & own_texts
    assert len(with_held_out.goals_by_split["test"]) > 2 * len(without.goals_by_split["test"])


def test_the_held_out_stream_draws_nothing_from_the_main_one(monkeypatch) -> None:
    """With no held-out share the generator writes exactly the same products and instructions:
    the held-out instructions come from a stream of their own."""
    from sdgym.envs.webshop import generator

    data = generate_upstream_data(2000, seed=0)
    monkeypatch.setattr(generator, "HELD_OUT_TEST_SHARE", 0.0)
    without = generate_upstream_data(2000, seed=0)
    assert without.test_instructions == {} and data.test_instructions
    assert (without.products, without.attributes, without.instructions) == (
        data.products, data.attributes, data.instructions)


def test_a_fixed_goal_split_must_be_one_of_the_splits_and_tags_its_ids() -> None:
    with pytest.raises(ValueError, match="unknown goal split 'holdout'"):
        make_goals([], {}, {}, split="holdout")
    catalog = generated_catalog("tiny")
    product = catalog.products[0]
    instructions = {product["asin"]: [{"instruction": "i need a thing",
                                       "instruction_attributes": ["x"]}]}
    ids = {split: make_goals([product], instructions, catalog.prices, split=split)[0]["goal_id"]
           for split in ("train", "val", "test")}
    assert len(set(ids.values())) == 3 and ids["test"] == f"{product['asin']}-t0"


def test_splits_are_disjoint_and_stable() -> None:
    catalog = generated_catalog("tiny")
    ids = {split: {g["goal_id"] for g in goals} for split, goals in catalog.goals_by_split.items()}
    assert not ids["train"] & ids["test"] and not ids["train"] & ids["val"]
    assert not ids["val"] & ids["test"]
    assert all(ids.values())
    assert split_of("B0ABCDEFGH-0") == split_of("B0ABCDEFGH-0")  # pure function of the id


def test_taxonomy_option_values_are_unique_per_type() -> None:
    from sdgym.envs.webshop.taxonomy import OPTION_POOLS

    for kind in PRODUCT_TYPES:
        names = [OPTION_POOLS[key][0] for key in kind.options]
        values = [v for key in kind.options for v in OPTION_POOLS[key][1]]
        assert len(names) == len(set(names)), kind.query
        assert len(values) == len(set(values)), kind.query


@pytest.mark.parametrize(
    ("price", "allowed"),
    [
        (7.9, {20.0, 30.0, 40.0}),
        (95.0, {110.0, 120.0, 130.0}),
        (975.0, {990.0}),
        (985.0, {NO_CEILING}),
    ],
)
def test_price_ceiling_rule(price: float, allowed: set[float]) -> None:
    ceilings = {draw_price_ceiling(price, u / 100) for u in range(100)}
    assert ceilings == allowed


def test_parse_pricing() -> None:
    assert parse_pricing("$12.99") == ([12.99], "$12.99")
    assert parse_pricing("$10.5 - $20") == ([10.5, 20.0], "$10.5 to $20.0")
    assert parse_pricing(None) == ([100.0], "$100.0")


@pytest.mark.slow
def test_full_catalog_size() -> None:
    catalog = generated_catalog("full")
    assert len(catalog.products) >= 10_000 and len(catalog.goals) >= 6_000
    assert len(catalog.goals_by_split["test"]) >= 500


def test_loader_reads_upstream_files(tmp_path: Path) -> None:
    product_file, instruction_file, attribute_file = write_upstream_files(tmp_path)
    catalog = load_upstream(product_file, instruction_file, attribute_file)
    assert [p["asin"] for p in catalog.products] == ["B000000001", "B000000002"]
    shampoo, shelf = catalog.products
    assert shampoo["options"] == {"size": ["8 fl oz", "16 fl oz | pack"]}
    assert shampoo["query"] == "shampoo" and shampoo["BulletPoints"] == ["Gentle daily shampoo."]
    assert shampoo["Attributes"] == ["tea tree", "sulfate free"]
    assert shelf["Attributes"] == ["DUMMY_ATTR"] and shelf["options"] == {}
    assert shelf["Price"] == "$40.0 to $60.0" and 40.0 <= catalog.prices["B000000002"] <= 60.0
    assert [g["goal_id"] for g in catalog.goals] == ["B000000001-0", "B000000002-0"]
    goal = catalog.goals[0]
    assert goal["instruction_text"].startswith("i need a tea tree shampoo, and price lower than")
    assert goal["price_upper"] in (20.0, 30.0, 40.0, 50.0)
    assert goal["goal_options"] == ["8 fl oz"]


def test_disk_cache_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path))
    uncached = generated_catalog.__wrapped__
    first = uncached("tiny", 5)
    assert list((tmp_path / "webshop").glob("catalog-tiny-5-*.pkl"))
    second = uncached("tiny", 5)
    assert second.products == first.products and second.goals == first.goals
