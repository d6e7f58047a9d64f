"""Easy goal splits for curricula and tiny models: ``easy_train``, ``easy_val``, ``easy_test``.

Definition: a goal of ``train`` (``val``, ``test``) belongs to ``easy_train`` (``easy_val``,
``easy_test``) when the
three-action *easy policy*

    ``search[<instruction text>]`` -> ``click[<first result>]`` -> ``click[buy now]``

earns reward 1.0. The search runs exactly as the search bar runs it (the instruction lower-cased,
whitespace collapsed) and nothing else is clicked, so the first hit -- the target itself, or any
product that matches the goal's type, every goal attribute and the price ceiling -- must score
1.0 when bought with no option selected; such goals have no goal options.

So each easy split is a subset of its standard split (no easy split shares a goal with another
standard split), in the standard split's order, and a pure function of the catalogue and the
search backend. The full generated catalogue has 864 ``easy_train``, 108 ``easy_val`` and 454
``easy_test`` goals with the default bm25 backend (114 of them from the positional goals, 340
from the held-out test instructions, :mod:`sdgym.envs.webshop.generator`).

Computing the subsets costs one search per standard goal (a few seconds for the full
catalogue), so they are made on first use, memoised per process, and cached on disk under
``$SDGYM_CACHE/webshop/easy`` keyed by a hash of the catalogue and the backend.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sdgym.cache import atomic_write_text, cache_dir, file_lock
from sdgym.envs.webshop.engine import search_keywords
from sdgym.envs.webshop.reward import purchase_reward
from sdgym.envs.webshop.schema import Catalog
from sdgym.envs.webshop.search import ProductSearch

EASY_SPLITS: dict[str, str] = {"easy_train": "train", "easy_val": "val", "easy_test": "test"}
"""Each easy split and the standard split it is drawn from."""

_MEMO: dict[str, dict[str, list[str]]] = {}
_MEMO_LOCK = threading.Lock()


def easy_query(goal: Mapping[str, Any]) -> str:
    """What the easy policy's search bar runs: the instruction as the engine normalises it."""
    return " ".join(search_keywords(str(goal["instruction_text"])))


def easy_policy_actions(goal: Mapping[str, Any], search: ProductSearch) -> list[str]:
    """The easy policy's actions for ``goal`` (no click if the search finds nothing)."""
    hits = search.search(easy_query(goal))
    if not hits:
        return [f"search[{goal['instruction_text']}]"]
    return [f"search[{goal['instruction_text']}]", f"click[{hits[0].lower()}]", "click[buy now]"]


def is_easy(goal: Mapping[str, Any], first_hit: str | None, catalog: Catalog) -> bool:
    """Whether buying ``first_hit`` with no option selected wins ``goal``."""
    if first_hit is None:
        return False
    reward, _ = purchase_reward(catalog.by_asin[first_hit], goal, catalog.prices[first_hit], {})
    return reward >= 1.0


def _easy_goal_ids(catalog: Catalog, search: ProductSearch) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    for easy, source in EASY_SPLITS.items():
        goals = catalog.goals_by_split.get(source, [])
        hits = search.batch_search([easy_query(goal) for goal in goals])
        ids[easy] = [
            goal["goal_id"]
            for goal, found in zip(goals, hits)
            if is_easy(goal, found[0] if found else None, catalog)
        ]
    return ids


def _cache_key(catalog: Catalog, search: ProductSearch) -> str:
    digest = hashlib.sha256()
    digest.update(search.corpus.fingerprint().encode())
    digest.update(search.backend.encode())
    for source in EASY_SPLITS.values():
        for goal in catalog.goals_by_split.get(source, []):
            record = [goal["goal_id"], goal["asin"], goal["instruction_text"], goal["attributes"],
                      goal["goal_options"], goal["price_upper"], goal["query"],
                      goal["product_category"], catalog.prices[goal["asin"]]]
            digest.update(json.dumps(record, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:24]


def easy_splits(catalog: Catalog, search: ProductSearch) -> dict[str, list[dict[str, Any]]]:
    """``{"easy_train": [...], "easy_val": [...]}``: the easy goals (see the module docstring)."""
    key = _cache_key(catalog, search)
    with _MEMO_LOCK:
        ids = _MEMO.get(key)
        if ids is None:
            ids = _load_or_compute(key, catalog, search)
            _MEMO[key] = ids
    by_id = {goal["goal_id"]: goal for goal in catalog.goals}
    return {split: [by_id[goal_id] for goal_id in ids[split]] for split in EASY_SPLITS}


def _read_ids(path: Path) -> dict[str, list[str]] | None:
    try:
        stored = json.loads(path.read_text())
    except (OSError, ValueError):  # no cache yet, or a torn one
        return None
    if not isinstance(stored, dict) or set(stored) != set(EASY_SPLITS):
        return None
    return {split: [str(goal_id) for goal_id in stored[split]] for split in EASY_SPLITS}


def _load_or_compute(key: str, catalog: Catalog, search: ProductSearch) -> dict[str, list[str]]:
    try:
        path = cache_dir("webshop", "easy") / f"{key}.json"
        with file_lock(path.with_suffix(".lock")):  # N processes compute it once
            ids = _read_ids(path)
            if ids is None:
                ids = _easy_goal_ids(catalog, search)
                atomic_write_text(path, json.dumps(ids))
            return ids
    except OSError:  # read-only or full cache: compute without it
        return _easy_goal_ids(catalog, search)
