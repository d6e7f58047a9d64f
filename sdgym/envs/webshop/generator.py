"""Generate a WebShop catalogue, deterministically from a seed, in upstream's raw file formats.

:func:`generate_upstream_data` returns the three objects upstream ships as JSON files (a raw
product list like ``items_shuffle.json``, an attribute map like ``items_ins_v2.json``, human
instructions like ``items_human_ins.json``) and held-out test instructions in the same format,
so generated data goes through exactly the loader real data goes through (:func:`sdgym.envs.webshop.loaders.build_catalog`).

Each product instantiates a :class:`~sdgym.envs.webshop.taxonomy.ProductType` (types are
dealt round-robin in a seeded order): a fictional brand, four to six of the type's attributes,
a descriptor, a title that mentions some attributes, bullet points and a description that
mention the others, a subset of each offered option's values, and a price (a quarter of
products with options show a price range, as upstream's do). About 0.8 instructions per
product are written from templates in the style of WebShop's human instructions: one to three
of the product's attributes, a value for most of its options.

Held-out test instructions: a second, independent stream writes one more instruction for about
a quarter of the products (:data:`HELD_OUT_TEST_SHARE`), never repeating one of that product's
instructions. They go to the test split only (goal ids ``"<asin>-t<k>"``), after every other
goal, so the products and the train / val / test goals the first stream writes are the same with
or without them. They exist so that the test split, and its easy subset, hold enough goals for a
comparison to reach its power (upstream's 500 human test goals are a fixed set; a generated
catalogue's 10% test share of ~8,000 goals leaves only ~114 easy ones).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import Any, NamedTuple, TypeVar

from sdgym.envs.webshop.taxonomy import BRAND_SYLLABLES, OPTION_POOLS, PRODUCT_TYPES, ProductType

SIZES: dict[str, int] = {"full": 10_000, "small": 2_000, "tiny": 300}
"""Number of products per named catalogue size."""

HELD_OUT_TEST_SHARE = 0.25
"""Share of products that get one held-out test instruction (see the module docstring)."""
HELD_OUT_ATTEMPTS = 8
"""Draws tried for a held-out instruction that repeats none of its product's; then none."""

T = TypeVar("T")

_ASIN_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_INSTRUCTION_COUNTS = (0, 0, 0, 1, 1, 1, 1, 1, 1, 2)  # drawn uniformly: mean 0.8
_OPENINGS = (
    "i need {article} {attrs} {noun}",
    "i am looking for {article} {noun} that is {attrs_and}",
    "i want {article} {attrs} {noun}",
    "find me {article} {noun} with {attrs_and}",
    "i'm looking for {article} {attrs} {noun}",
    "please get me {article} {attrs} {noun}",
)
_OPTION_PHRASES = {
    "color": "in {value} color",
    "size": "in size {value}",
    "band size": "in band size {value}",
    "flavor name": "in {value} flavor",
    "scent": "with {value} scent",
    "capacity": "with {value} capacity",
    "style": "in {value} style",
    "item package quantity": "in a {value}",
}
_BULLETS = (
    "{Attr}: this {noun} is made to be {attr}, tested by our team.",
    "Designed for everyday use with {attr} in mind.",
    "Customers love it because it is {attr}.",
    "Quality you can trust: {attr} and backed by our satisfaction guarantee.",
)


class Draws:
    """Seeded random draws built only on ``random.Random(int).random()``, the one stream Python
    guarantees to stay the same across versions and platforms."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed).random

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        return min(int(self._random() * n), n - 1)

    def chance(self, p: float) -> bool:
        """True with probability ``p``."""
        return self._random() < p

    def uniform(self, low: float, high: float) -> float:
        """A uniform float in ``[low, high)``."""
        return low + (high - low) * self._random()

    def choice(self, items: Sequence[T]) -> T:
        """A uniform element of ``items``."""
        return items[self.below(len(items))]

    def permutation(self, n: int) -> list[int]:
        """A uniform permutation of ``range(n)`` (Fisher-Yates)."""
        order = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self.below(i + 1)
            order[i], order[j] = order[j], order[i]
        return order

    def subset(self, items: Sequence[T], low: int, high: int) -> list[T]:
        """Between ``low`` and ``high`` distinct elements of ``items``, in their order."""
        low, high = min(low, len(items)), min(high, len(items))
        k = low + self.below(high - low + 1)
        return [items[i] for i in sorted(self.permutation(len(items))[:k])]


def _asin(seed: int, index: int, taken: set[str]) -> str:
    salt = 0
    while True:
        digest = hashlib.sha256(f"{seed}:{index}:{salt}".encode()).digest()
        code = "B0" + "".join(_ASIN_ALPHABET[b % 36] for b in digest[:8])
        if code not in taken:
            taken.add(code)
            return code
        salt += 1


def _title_case(text: str) -> str:
    return " ".join(word[:1].upper() + word[1:] for word in text.split())


def _article(noun: str, next_word: str) -> str:
    """``a``/``an`` before ``next_word``, nothing for a plural ``noun`` (``boots``)."""
    if noun.endswith("s") and not noun.endswith("ss"):
        return ""
    return "an" if next_word[:1] in "aeiou" else "a"


def _price_text(rng: Draws, kind: ProductType, has_options: bool) -> str:
    low, high = kind.price
    base = int(rng.uniform(low, high)) + rng.choice((0.99, 0.49, 0.95, 0.0))
    if has_options and rng.chance(0.25):
        top = round(base * rng.uniform(1.2, 1.9), 2)
        return f"${base:.2f} - ${top:.2f}"
    return f"${base:.2f}"


def _raw_product(rng: Draws, kind: ProductType, asin: str) -> dict[str, Any]:
    brand = _title_case(rng.choice(BRAND_SYLLABLES[0]) + rng.choice(BRAND_SYLLABLES[1]))
    attributes = rng.subset(kind.attributes, 4, 6)
    order = rng.permutation(len(attributes))
    shown = [attributes[i] for i in order]
    descriptor = rng.choice(kind.descriptors)
    title = f"{brand} {_title_case(shown[0])} {_title_case(descriptor)} {_title_case(kind.noun)}"
    extras = shown[1 : 1 + rng.below(3)]
    if extras:
        title += " - " + ", ".join(_title_case(attr) for attr in extras)
    options: dict[str, list[dict[str, Any]]] = {}
    for key in kind.options:
        if rng.chance(0.85):
            name, values = OPTION_POOLS[key]
            options[_title_case(name)] = [
                {"value": v, "image": None} for v in rng.subset(values, 2, 6)
            ]
    bullets = [
        rng.choice(_BULLETS).format(attr=attr, Attr=_title_case(attr), noun=kind.noun)
        for attr in shown[1:]
    ]
    description = (
        f"The {brand} {descriptor} {kind.noun} is {shown[0]} and {shown[-1]}. "
        f"{_title_case(descriptor)} design for {kind.category} shoppers who want "
        f"{' and '.join(shown[1:3])}."
    )
    return {
        "asin": asin,
        "name": title,
        "query": kind.query,
        "category": kind.category,
        "product_category": kind.path,
        "small_description": bullets,
        "full_description": description,
        "customization_options": options or None,
        "pricing": _price_text(rng, kind, bool(options)),
        "images": [],
        "attributes": attributes,
    }


def _instruction(rng: Draws, kind: ProductType, raw: dict[str, Any]) -> dict:
    attributes = rng.subset(raw["attributes"], 1, 3)
    chosen: list[tuple[str, str]] = []
    for name, contents in (raw["customization_options"] or {}).items():
        if rng.chance(0.8):
            chosen.append((name.lower(), str(rng.choice(contents)["value"])))
    attrs = ", ".join(attributes)
    template = rng.choice(_OPENINGS)
    opening = template.format(
        article=_article(kind.noun, attrs if "{article} {attrs}" in template else kind.noun),
        attrs=attrs,
        attrs_and=" and ".join(attributes),
        noun=kind.noun,
    )
    text = " ".join(opening.split())
    if chosen:
        phrases = [_OPTION_PHRASES[name].format(value=value) for name, value in chosen]
        text += ", " + " and ".join(phrases)
    return {
        "asin": raw["asin"],
        "instruction": text,
        "instruction_attributes": attributes,
        "instruction_options": [value for _, value in chosen],
    }


class GeneratedData(NamedTuple):
    """A generated catalogue in upstream's raw formats, plus the held-out test instructions."""

    products: list[dict[str, Any]]
    """The raw product list, in upstream's ``items_shuffle`` order."""
    attributes: dict[str, dict[str, Any]]
    """The attribute map by asin (``items_ins_v2``)."""
    instructions: dict[str, list[dict[str, Any]]]
    """Human-style instructions by asin (``items_human_ins``); their splits come from their ids."""
    test_instructions: dict[str, list[dict[str, Any]]]
    """Held-out instructions by asin, in the same format, for the test split only."""


def _stream_seed(seed: int, name: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{name}".encode()).digest()[:8], "big")


def _held_out_instruction(
    rng: Draws, kind: ProductType, raw: dict[str, Any], taken: Sequence[dict[str, Any]]
) -> dict[str, Any] | None:
    texts = {instruction["instruction"] for instruction in taken}
    for _ in range(HELD_OUT_ATTEMPTS):
        instruction = _instruction(rng, kind, raw)
        if instruction["instruction"] not in texts:
            return instruction
    return None


def generate_upstream_data(num_products: int, seed: int = 0) -> GeneratedData:
    """The raw products, attribute map and instructions (upstream's formats), plus held-out
    test instructions from an independent stream (see the module docstring)."""
    rng = Draws(seed)
    held_out = Draws(_stream_seed(seed, "held-out test instructions"))
    type_order = rng.permutation(len(PRODUCT_TYPES))
    taken: set[str] = set()
    products: list[dict[str, Any]] = []
    instructions: dict[str, list[dict[str, Any]]] = {}
    test_instructions: dict[str, list[dict[str, Any]]] = {}
    for index in range(num_products):
        kind = PRODUCT_TYPES[type_order[index % len(PRODUCT_TYPES)]]
        raw = _raw_product(rng, kind, _asin(seed, index, taken))
        products.append(raw)
        count = rng.choice(_INSTRUCTION_COUNTS)
        if count:
            instructions[raw["asin"]] = [_instruction(rng, kind, raw) for _ in range(count)]
        if held_out.chance(HELD_OUT_TEST_SHARE):
            extra = _held_out_instruction(held_out, kind, raw, instructions.get(raw["asin"], []))
            if extra is not None:
                test_instructions[raw["asin"]] = [extra]
    attributes = {raw["asin"]: {"attributes": raw.pop("attributes")} for raw in products}
    order = rng.permutation(len(products))  # upstream's items_shuffle order
    return GeneratedData([products[i] for i in order], attributes, instructions, test_instructions)
