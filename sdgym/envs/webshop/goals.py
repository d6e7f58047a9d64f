"""Goals (shopping instructions) from per-product instructions, with price ceilings and splits.

Upstream (``get_human_goals``) turns each human instruction of a product into a goal: the target
``asin``, the product's ``category``/``query``/``name``/``product_category``, the instruction's
attributes and options, and a price ceiling. The ceiling is drawn from the multiples of 10 above
the product's price: take the first four, pick two at random and keep the larger; the instruction
then ends with ``", and price lower than X.XX dollars"``. With fewer than two such multiples the
ceiling is 1,000,000 and no price is mentioned. Upstream draws with Python's global ``random``;
here each goal's draw is a hash of ``(seed, goal id)`` (:func:`unit_hash`), so goals do not
depend on one another or on load order.

Splits: upstream shuffles goals with a fixed seed and takes the first 500 as test and the next
1,000 as validation. Here a goal's split is a pure function of its id (``crc32 % 20``: 0-1 test,
2-3 val, the rest train), so splits are disjoint, stable across machines and unaffected by
adding goals. Goals made with a fixed ``split`` (held-out test instructions) carry a tagged id
(``"<asin>-t<k>"``) and keep that split.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

PRICE_RANGE: tuple[float, ...] = tuple(10.0 * i for i in range(1, 100))
NO_CEILING = 1_000_000.0
SPLITS: tuple[str, ...] = ("train", "val", "test")
SPLIT_TAGS: dict[str, str] = {"train": "r", "val": "v", "test": "t"}
"""The id tag of goals made with a fixed split (``"<asin>-<tag><k>"``): distinct per split."""


def unit_hash(*parts: object) -> float:
    """A deterministic, platform-independent number in ``[0, 1)`` from ``parts`` (crc32)."""
    return zlib.crc32(":".join(map(str, parts)).encode()) / 2**32


def draw_price_ceiling(price: float, u: float) -> float:
    """Upstream's ceiling: the larger of two of the first four multiples of 10 above ``price``.

    ``u`` in ``[0, 1)`` picks the pair (uniformly among the pairs, as ``random.sample`` does).
    """
    candidates = [p for p in PRICE_RANGE if p > price][:4]
    if len(candidates) < 2:
        return NO_CEILING
    pairs = list(itertools.combinations(range(len(candidates)), 2))
    return candidates[pairs[int(u * len(pairs))][1]]


def price_clause(price_upper: float) -> str:
    """The instruction suffix for a ceiling (empty without one)."""
    if price_upper >= NO_CEILING:
        return ""
    return f", and price lower than {price_upper:.2f} dollars"


def split_of(goal_id: str) -> str:
    """The split of a goal id: deterministic, platform-independent, about 80/10/10."""
    bucket = zlib.crc32(goal_id.encode()) % 20
    return "test" if bucket < 2 else "val" if bucket < 4 else "train"


def make_goals(
    products: Sequence[Mapping[str, Any]],
    instructions: Mapping[str, Sequence[Mapping[str, Any]]],
    prices: Mapping[str, float],
    seed: int = 0,
    *,
    split: str | None = None,
) -> list[dict[str, Any]]:
    """Goals from upstream-format human instructions (``{asin: [instruction, ...]}``).

    Each instruction needs ``instruction`` (text), ``instruction_attributes`` (list) and
    ``instruction_options`` (list of values, or dict name -> value); instructions without
    attributes are skipped, as upstream does. Goal ids are ``"<asin>-<k>"`` with ``k`` the
    instruction's position for that product. Goals come out in product order.

    ``split``: put every goal in this split, with ids ``"<asin>-<tag><k>"`` (:data:`SPLIT_TAGS`)
    that never collide with the positional ids or another split's; ``None``: each goal's split is
    :func:`split_of` of its id.
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown goal split {split!r}; choose one of {list(SPLITS)}")
    tag = "" if split is None else SPLIT_TAGS[split]
    goals: list[dict[str, Any]] = []
    for product in products:
        asin = product["asin"]
        for k, instruction in enumerate(instructions.get(asin, ())):
            attributes = list(instruction.get("instruction_attributes") or [])
            if not attributes:
                continue
            goal_id = f"{asin}-{tag}{k}"
            ceiling = draw_price_ceiling(prices[asin], unit_hash(seed, goal_id))
            text = str(instruction["instruction"]).strip().strip(".") + price_clause(ceiling)
            options = instruction.get("instruction_options") or []
            goals.append(
                {
                    "goal_id": goal_id,
                    "asin": asin,
                    "category": product["category"],
                    "query": product["query"],
                    "name": product["name"],
                    "product_category": product["product_category"],
                    "instruction_text": text,
                    "attributes": attributes,
                    "price_upper": ceiling,
                    "goal_options": dict(options)
                    if isinstance(options, Mapping)
                    else list(options),
                    "weight": 1,
                    "split": split or split_of(goal_id),
                }
            )
    return goals
