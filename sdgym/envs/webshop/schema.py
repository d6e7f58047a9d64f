"""The in-memory catalogue: normalised products, their prices and the goals, split by split.

Products are dicts in the shape upstream's ``load_products`` produces (so the reward functions
read the same keys as upstream's): ``asin``, ``name``/``Title``, ``query``, ``category``,
``product_category``, ``BulletPoints`` (list), ``Description``, ``options`` (lower-case option
name -> list of values), ``pricing`` (one price or ``[low, high]``), ``Price`` (the price tag
shown), ``Attributes``, ``Reviews``, ``Rating``, ``MainImage``.

Goals are dicts as built by :func:`sdgym.envs.webshop.goals.make_goals`: ``goal_id``, ``asin``,
``category``, ``query``, ``name``, ``product_category``, ``instruction_text``, ``attributes``,
``goal_options``, ``price_upper``, ``weight``, ``split``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Catalog:
    """Products, the price each one sells at, and the goals.

    Attributes:
        products: normalised product dicts, in catalogue order (the search index order).
        prices: asin -> the price a purchase pays (a point inside a ``[low, high]`` range).
        goals: every goal; ``goals_by_split`` indexes them per split.
        source: a short description of where the data came from.
    """

    products: list[dict[str, Any]]
    prices: dict[str, float]
    goals: list[dict[str, Any]]
    source: str = "generated"
    by_asin: dict[str, dict[str, Any]] = field(init=False, repr=False)
    goals_by_split: dict[str, list[dict[str, Any]]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_asin = {product["asin"]: product for product in self.products}
        self.goals_by_split = {"train": [], "val": [], "test": []}
        for goal in self.goals:
            self.goals_by_split.setdefault(goal["split"], []).append(goal)

    def __repr__(self) -> str:
        sizes = {split: len(goals) for split, goals in self.goals_by_split.items()}
        return f"Catalog({len(self.products)} products, goals {sizes}, source={self.source!r})"
