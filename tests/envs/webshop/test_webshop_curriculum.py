"""The easy curriculum splits (easy_train, easy_val) and the product search behind them."""

from __future__ import annotations

import json

import pytest

from sdgym.envs.webshop import curriculum
from sdgym.envs.webshop.curriculum import EASY_SPLITS, easy_policy_actions, easy_splits
from sdgym.envs.webshop.env import WebShopEnv
from sdgym.envs.webshop.search import ProductSearch
from sdgym.retrieval import shared_retriever


@pytest.fixture(scope="module")
def env() -> WebShopEnv:
    env = WebShopEnv(size="tiny")
    yield env
    env.close()


def _ids(goals: list[dict]) -> list[str]:
    return [goal["goal_id"] for goal in goals]


def test_easy_splits_are_ordered_subsets_with_train_val_separation(env: WebShopEnv) -> None:
    standard = {split: _ids(env.goals(split)) for split in ("train", "val", "test")}
    for easy, source in EASY_SPLITS.items():
        ids = _ids(env.goals(easy))
        assert ids, f"{easy} is empty"
        assert len(ids) < len(standard[source])
        assert ids == [goal_id for goal_id in standard[source] if goal_id in set(ids)]
        others = set().union(*(set(v) for k, v in standard.items() if k != source))
        assert not set(ids) & others
    assert not set(_ids(env.goals("easy_train"))) & set(_ids(env.goals("easy_val")))


def test_easy_policy_wins_exactly_the_easy_goals(env: WebShopEnv) -> None:
    """Through the env: the three-action policy wins every easy goal and no other one."""
    for easy, split in EASY_SPLITS.items():
        easy_ids = set(_ids(env.goals(easy)))
        for index, goal in enumerate(env.goals(split)):
            obs, info = env.reset(options={"split": split, "task_index": index})
            won = False
            for action in easy_policy_actions(goal, env.engine.index):
                obs, reward, terminated, _, info = env.step(action)
                assert info["action_valid"], (action, obs)
                won = info["won"]
            assert won == (goal["goal_id"] in easy_ids), goal["goal_id"]


def test_easy_goals_are_selectable_and_the_expert_wins_them(env: WebShopEnv) -> None:
    for split in EASY_SPLITS:
        for index in range(env.task_count(split)):
            obs, info = env.reset(options={"split": split, "task_index": index})
            assert info["split"] == split and not info["privileged"]["goal"]["goal_options"]
            for action in info["privileged"]["expert_plan"]:
                obs, reward, terminated, _, info = env.step(action)
            assert terminated and info["won"]
    _, first = env.reset(seed=5, options={"split": "easy_train"})
    _, again = env.reset(seed=5, options={"split": "easy_train"})
    assert first["task_id"] == again["task_id"]


def test_easy_splits_are_deterministic_and_cached_on_disk(env, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path))
    monkeypatch.setattr(curriculum, "_MEMO", {})
    computed = easy_splits(env.catalog, env.engine.index)
    (stored,) = (tmp_path / "webshop" / "easy").glob("*.json")
    assert json.loads(stored.read_text()) == {k: _ids(v) for k, v in computed.items()}
    monkeypatch.setattr(curriculum, "_MEMO", {})
    monkeypatch.setattr(curriculum, "_easy_goal_ids", lambda *a: pytest.fail("recomputed"))
    assert easy_splits(env.catalog, env.engine.index) == computed
    assert computed == easy_splits(env.catalog, ProductSearch(env.catalog.products))


def test_product_search_goes_through_the_shared_retriever(env: WebShopEnv) -> None:
    search = env.engine.index
    assert search.retriever is shared_retriever(search.corpus, "bm25")
    assert len(search.corpus) == len(env.catalog.products)
    product = env.catalog.products[7]
    assert search.corpus.get(product["asin"]).title == product["Title"]
    hits = search.search(product["Title"].lower())
    assert hits[0] == product["asin"] and len(hits) <= 50
    assert search.search(product["Title"].lower()) is hits  # answered by the LRU cache
    assert search.batch_search([product["Title"].lower()]) == [hits]
    assert search.search("zzzqqq unknownword") == ()
    with pytest.raises(ValueError, match="unknown retrieval backend"):
        ProductSearch(env.catalog.products, backend="nope")
