"""Read WebShop data in upstream's file formats (and normalise generated data the same way).

Upstream files (princeton-nlp/WebShop ``data/``):

- products, e.g. ``items_shuffle.json``: a JSON list of raw products with ``asin``, ``name``,
  ``query``, ``category``, ``product_category``, ``small_description`` (str or list),
  ``full_description``, ``pricing`` (``"$12.99"`` or ``"$10.99 - $24.99"``),
  ``customization_options`` (``{name: [{"value": ..., "image": ...}, ...]}`` or ``null``),
  ``images``;
- attributes, e.g. ``items_ins_v2.json``: ``{asin: {"attributes": [...], ...}}``;
- human instructions, ``items_human_ins.json``: ``{asin: [{"instruction": ...,
  "instruction_attributes": [...], "instruction_options": [...]}, ...]}``.

:func:`normalize_products` applies upstream ``load_products``' rules (skip ``nan``/over-long and
duplicate asins, lower-case option names and values with ``/`` shown as ``" | "``, parse price
tags, ``["DUMMY_ATTR"]`` for products without attributes). As an extension, a raw product may
carry its own ``attributes`` list, used when no attribute file lists it.

Example:
    >>> catalog = load_upstream("items_shuffle.json", "items_human_ins.json",  # doctest: +SKIP
    ...                         attribute_file="items_ins_v2.json")
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from os import PathLike
from typing import Any

from sdgym.envs.webshop.goals import make_goals, unit_hash
from sdgym.envs.webshop.schema import Catalog

DEFAULT_PRICE = 100.0


def parse_pricing(pricing: str | None) -> tuple[list[float], str]:
    """``(prices, price tag)`` of an upstream pricing string: one price or a ``[low, high]``."""
    if not pricing:
        return [DEFAULT_PRICE], f"${DEFAULT_PRICE}"
    values = [float(Decimal(re.sub(r"[^\d.]", "", part) or "0")) for part in pricing.split("$")[1:]]
    if not values:
        return [DEFAULT_PRICE], f"${DEFAULT_PRICE}"
    if len(values) == 1:
        return values, f"${values[0]}"
    return values[:2], f"${values[0]} to ${values[1]}"


def _option_value(content: Any) -> str:
    value = content.get("value", "") if isinstance(content, Mapping) else content
    return str(value).strip().replace("/", " | ").lower()


def normalize_options(customization: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """Upstream option normalisation: lower-case names and values, ``/`` becomes ``" | "``."""
    options: dict[str, list[str]] = {}
    for name, contents in (customization or {}).items():
        if contents is None:
            continue
        options[str(name).lower()] = [_option_value(content) for content in contents]
    return options


def normalize_products(
    raw_products: Iterable[Mapping[str, Any]],
    attributes: Mapping[str, Mapping[str, Any]] | None = None,
    num_products: int | None = None,
) -> list[dict[str, Any]]:
    """Normalised product dicts (see :mod:`sdgym.envs.webshop.schema`) from raw products."""
    attributes = attributes or {}
    raw = list(raw_products)
    if num_products is not None:
        raw = raw[:num_products]
    seen: set[str] = set()
    products: list[dict[str, Any]] = []
    for item in raw:
        asin = str(item.get("asin", "nan"))
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        bullets = item.get("small_description") or []
        pricing, price_tag = parse_pricing(item.get("pricing"))
        listed = attributes.get(asin, {}).get("attributes") or item.get("attributes")
        images = item.get("images") or [None]
        products.append(
            {
                "asin": asin,
                "name": item["name"],
                "Title": item["name"],
                "query": str(item.get("query", "")).lower().strip(),
                "category": item.get("category", ""),
                "product_category": item.get("product_category", ""),
                "BulletPoints": list(bullets) if isinstance(bullets, list) else [bullets],
                "Description": item.get("full_description") or "",
                "options": normalize_options(item.get("customization_options")),
                "pricing": pricing,
                "Price": price_tag,
                "Attributes": list(listed) if listed else ["DUMMY_ATTR"],
                "Reviews": [],
                "Rating": "N.A.",
                "MainImage": images[0],
            }
        )
    return products


def product_prices(products: Iterable[Mapping[str, Any]], seed: int = 0) -> dict[str, float]:
    """The price each product sells at: its price, or a uniform draw inside its range.

    Upstream draws with the global ``random``; here the draw is a hash of ``(seed, asin)``
    (:func:`~sdgym.envs.webshop.goals.unit_hash`), rounded to cents.
    """
    prices: dict[str, float] = {}
    for product in products:
        pricing = product["pricing"]
        if len(pricing) == 1:
            prices[product["asin"]] = float(pricing[0])
        else:
            u = unit_hash(seed, product["asin"])
            prices[product["asin"]] = round(pricing[0] + u * (pricing[1] - pricing[0]), 2)
    return prices


def build_catalog(
    raw_products: Iterable[Mapping[str, Any]],
    instructions: Mapping[str, Any],
    attributes: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    seed: int = 0,
    num_products: int | None = None,
    source: str = "upstream",
    test_instructions: Mapping[str, Any] | None = None,
) -> Catalog:
    """A :class:`Catalog` from upstream-format data already in memory.

    ``test_instructions`` (the same format as ``instructions``): held-out goals for the test
    split only, after all the others (:func:`~sdgym.envs.webshop.goals.make_goals`).
    """
    products = normalize_products(raw_products, attributes, num_products)
    prices = product_prices(products, seed)
    goals = make_goals(products, instructions, prices, seed)
    if test_instructions:
        goals += make_goals(products, test_instructions, prices, seed, split="test")
    return Catalog(products=products, prices=prices, goals=goals, source=source)


def _read_json(path: str | PathLike[str]) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def load_upstream(
    product_file: str | PathLike[str],
    instruction_file: str | PathLike[str],
    attribute_file: str | PathLike[str] | None = None,
    *,
    seed: int = 0,
    num_products: int | None = None,
) -> Catalog:
    """A :class:`Catalog` from upstream WebShop files (product list, human instructions,
    optional attribute file); ``num_products`` keeps the first N products as upstream does."""
    attributes = _read_json(attribute_file) if attribute_file is not None else None
    return build_catalog(
        _read_json(product_file),
        _read_json(instruction_file),
        attributes,
        seed=seed,
        num_products=num_products,
        source=f"upstream:{product_file}",
    )
