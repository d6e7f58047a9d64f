"""Pages, navigation and invalid actions of the WebShop engine."""

from __future__ import annotations

import pytest

from sdgym.core import InvalidAction
from sdgym.envs.webshop.catalog import generated_catalog
from sdgym.envs.webshop.engine import SEARCH_TEMPLATE, ShopEngine, parse_action
from sdgym.envs.webshop.search import ProductSearch
from sdgym.envs.webshop.state import DONE, ITEM, RESULTS, SUB_PAGE, ShopState


@pytest.fixture(scope="module")
def engine() -> ShopEngine:
    catalog = generated_catalog("tiny")
    return ShopEngine(catalog, ProductSearch(catalog.products), show_attrs=True)


@pytest.fixture(scope="module")
def goal(engine: ShopEngine) -> dict:
    return next(g for g in engine.catalog.goals if g["goal_options"])


def _results(engine: ShopEngine, goal: dict) -> ShopState:
    return engine.step(ShopState(), "search[Easy Wash FREE]", goal)


def test_parse_action() -> None:
    assert parse_action("Click[ Buy Now ]") == ("click", "Buy Now")
    assert parse_action("search[a [b] c]") == ("search", "a [b] c")
    for bad in ("buy", "click", "[x]", "click[x"):
        with pytest.raises(InvalidAction):
            parse_action(bad)


def test_search_page(engine: ShopEngine, goal: dict) -> None:
    assert engine.available_actions(ShopState()) == [SEARCH_TEMPLATE]
    page = engine.page(ShopState(), "buy shoes")
    assert page.render("text") == "WebShop [SEP] Instruction: [SEP] buy shoes [SEP] Search"
    assert 'id="search_input"' in page.render("html")


def test_results_paging(engine: ShopEngine, goal: dict) -> None:
    state = _results(engine, goal)
    assert state.page == RESULTS and state.keywords == ("easy", "wash", "free")
    hits = engine.results(state)
    assert 10 < len(hits) <= 50
    actions = engine.available_actions(state)
    assert "click[next >]" in actions and "click[< prev]" not in actions
    assert actions[2:] == [f"click[{asin.lower()}]" for asin in hits[:10]]
    state2 = engine.step(state, "click[Next >]", goal)
    assert state2.page_number == 2 and "click[< prev]" in engine.available_actions(state2)
    assert f"click[{hits[10].lower()}]" in engine.available_actions(state2)
    assert engine.step(state2, "click[< prev]", goal).page_number == 1
    assert engine.step(state2, "click[back to search]", goal) == ShopState()


def test_item_page_options_and_sub_pages(engine: ShopEngine, goal: dict) -> None:
    state = _results(engine, goal)
    asin = next(a for a in engine.results(state)[:10] if engine.catalog.by_asin[a]["options"])
    item = engine.step(state, f"click[{asin.lower()}]", goal)
    assert item.page == ITEM and item.asin == asin and item.visited == {asin}
    name, values = next(iter(engine.catalog.by_asin[asin]["options"].items()))
    chosen = engine.step(item, f"click[{values[-1]}]", goal)
    assert chosen.selected == {name: values[-1]}
    rich = engine.page(chosen, "x").render("text_rich")
    assert rich.startswith(f"You have clicked {values[-1]}.")
    assert f"[clicked button] {values[-1]} [clicked button_]" in rich
    for sub in ("description", "features", "reviews", "attributes"):
        sub_state = engine.step(chosen, f"click[{sub}]", goal)
        assert sub_state.page == SUB_PAGE
        assert engine.available_actions(sub_state) == ["click[back to search]", "click[< prev]"]
        assert engine.step(sub_state, "click[< prev]", goal) == chosen  # options kept
    back = engine.step(chosen, "click[< prev]", goal)
    assert back.page == RESULTS and back.options == () and back.page_number == 1
    rich_results = engine.page(back, "x").render("text_rich")
    assert f"[clicked button] {asin} [clicked button_]" in rich_results


def test_buy_now_scores_the_purchase(engine: ShopEngine, goal: dict) -> None:
    state = ShopState(page=ITEM, keywords=("x",), asin=goal["asin"])
    done = engine.step(state, "click[buy now]", goal)
    assert done.page == DONE and 0.0 <= done.reward < 1.0  # goal options not selected
    assert "Your score" in engine.page(done, "x").render("text")
    with pytest.raises(InvalidAction):
        engine.step(done, "click[back to search]", goal)


@pytest.mark.parametrize(
    "command",
    [
        "",
        "hello",
        "click[nothing here]",
        "click[search]",
        "search[]",
        "jump[x]",
        "click[]",
        "click[buy now]",
        "search[shoes",
    ],
)
def test_invalid_actions_raise_without_side_effects(
    engine: ShopEngine, goal: dict, command: str
) -> None:
    state = ShopState()
    with pytest.raises(InvalidAction):
        engine.step(state, command, goal)
    results = _results(engine, goal)
    with pytest.raises(InvalidAction):
        engine.step(results, "search[more shoes]", goal)  # no search bar here
    assert state == ShopState()


def test_observation_modes_render(engine: ShopEngine, goal: dict) -> None:
    page = engine.page(_results(engine, goal), "find shoes & socks")
    assert page.render("text").startswith("Instruction: [SEP] find shoes & socks [SEP] Back")
    assert "[button] Back to Search [button_]" in page.render("text_rich")
    html = page.render("html")
    assert "find shoes &amp; socks" in html and 'class="product-link"' in html
    with pytest.raises(ValueError):
        page.render("pixels")
