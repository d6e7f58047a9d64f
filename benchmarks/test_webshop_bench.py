"""Throughput of sdgym/WebShop-v0 in text mode: steps per second, reset latency, search latency.

``test_expert_episode_steps`` reports ``steps_per_s`` (reset + expert actions per second, one
uncached search per episode; target >= 1,000 in one process). ``test_product_search`` times the
search bar's retriever call on fresh queries against the same queries answered from the LRU cache.
``test_action_latency`` times one click in browser mode against text mode (skipped, with the
reason, where Chromium is missing).

Run: ``python -m pytest benchmarks/test_webshop_bench.py --benchmark-only``.
"""

from __future__ import annotations

import pytest

from sdgym.envs.webshop.catalog import generated_catalog
from sdgym.envs.webshop.env import WebShopEnv
from sdgym.envs.webshop.search import ProductSearch

pytest.importorskip("pytest_benchmark")


@pytest.fixture(scope="module", params=[True, False], ids=["privileged", "plain"])
def env(request: pytest.FixtureRequest) -> WebShopEnv:
    env = WebShopEnv(size="full", privileged=request.param)
    yield env
    env.close()


def _expert_episode(env: WebShopEnv, index: int) -> int:
    _, info = env.reset(options={"split": "train", "task_index": index})
    plan = env.expert_plan()
    for action in plan:
        env.step(action)
    return len(plan) + 1


def test_reset_latency(benchmark, env: WebShopEnv) -> None:
    counter = iter(range(10**9))
    benchmark(lambda: env.reset(options={"split": "train", "task_index": next(counter) % 500}))


def test_expert_episode_steps(benchmark, env: WebShopEnv) -> None:
    """One expert episode (reset + ~4 steps) on a fresh goal per round."""
    counter = iter(range(10**9))
    steps: list[int] = []
    benchmark(lambda: steps.append(_expert_episode(env, next(counter) % 5000)))
    assert min(steps) >= 3
    per_episode = sum(steps) / len(steps)
    benchmark.extra_info["steps_per_s"] = round(per_episode / benchmark.stats.stats.mean, 1)
    # the median is robust to other processes sharing the CPU
    benchmark.extra_info["steps_per_s_median"] = round(
        per_episode / benchmark.stats.stats.median, 1
    )


def test_invalid_step(benchmark, env: WebShopEnv) -> None:
    env.reset(options={"split": "train", "task_index": 0})
    benchmark(env.step, "click[nothing]")


@pytest.mark.parametrize("cached", [False, True], ids=["fresh", "cached"])
def test_product_search(benchmark, cached: bool) -> None:
    """One search-bar query over the full catalogue: retriever call vs LRU cache hit."""
    catalog = generated_catalog("full")
    search = ProductSearch(catalog.products, cache_size=10**6)
    queries = [" ".join(goal["instruction_text"].lower().split()) for goal in catalog.goals]
    if cached:
        for query in queries:
            search.search(query)
    counter = iter(range(10**9))
    hits = benchmark(lambda: search.search(queries[next(counter) % len(queries)]))
    assert isinstance(hits, tuple)


@pytest.fixture(scope="module")
def browser_env():
    from sdgym.envs.webshop.chromium import browser_unavailable_reason

    reason = browser_unavailable_reason()
    if reason is not None:
        pytest.skip(f"browser mode: {reason}")
    env = WebShopEnv(size="full", mode="browser", privileged=False)
    yield env
    env.close()


@pytest.mark.parametrize("mode", ["text", "browser"])
def test_action_latency(benchmark, request: pytest.FixtureRequest, mode: str) -> None:
    """One paging click on a results page (``click[next >]`` / ``click[< prev]`` in turn): the
    browser's round trip through Chromium and the Flask site against the in-process engine."""
    env = request.getfixturevalue("browser_env") if mode == "browser" else WebShopEnv(size="full")
    env.reset(options={"split": "test", "task_index": 0})
    env.step("search[shoes]")
    clicks = iter(["click[next >]", "click[< prev]"] * 10**6)
    step = benchmark(lambda: env.step(next(clicks)))
    assert step[4]["action_valid"]
