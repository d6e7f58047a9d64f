"""WebShop's purchase reward (Yao et al. 2022, ``web_agent_site/engine/goal.py``), factor by factor.

For a purchased product ``p`` (normalised product dict: ``query``, ``product_category``, ``name``,
``Title``, ``BulletPoints``, ``Description``, ``Attributes``), the options the agent selected, the
price it paid and a goal ``g`` (``query``, ``product_category``, ``name``, ``attributes``,
``goal_options``, ``price_upper``)::

    total = r_type * (attribute matches + option matches + [price <= price_upper])
                   / (len(g.attributes) + len(g.goal_options) + 1)

- :func:`type_reward` -- ``r_type`` from three signals: same ``query``; at least two shared
  ``product_category`` segments; ``title_score``, the number of distinct nouns the two names
  share divided by the number of noun tokens in the goal name (repeats counted, as upstream).
  ``r_type`` is 1, lowered to 0.5 when none of the three signals
  holds (title signal: ``title_score > 0.2``), to 0.1 when ``title_score < 0.1`` and to 0 when it
  is 0. A goal name without nouns gives ``title_score = 0.2``.
- :func:`attribute_reward` -- a goal attribute matches when its fuzzy score against one of the
  product's ``Attributes`` exceeds 85, or else when it occurs (case-sensitively, as a
  substring) in the lower-cased title, bullet points or description.
- :func:`option_reward` -- each goal option matches when some selected option scores above 85
  after both are reduced by :func:`normalize_color` (first colour word they contain).
- :func:`price_reward` -- 1 when the paid price is at most the ceiling.

Fuzzy scores are thefuzz's ``token_set_ratio`` as upstream calls it: inputs ASCII-only, lower
case, non-alphanumerics as spaces, and the score rounded to an integer before the ``> 85`` test
(computed here with rapidfuzz).

Title nouns: upstream keeps tokens that spaCy's ``en_core_web_sm`` tags ``NOUN`` or ``PROPN``.
When spaCy and that model are importable they are used; otherwise :func:`heuristic_nouns`, a
deterministic POS-free approximation, is (see its docstring). ``NOUN_BACKEND`` says which.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz
from rapidfuzz import utils as fuzz_utils

FUZZY_THRESHOLD = 85
"""A fuzzy score must be strictly greater than this to count as a match."""

CATEGORY_SEPARATOR = "›"

COLOR_SET: tuple[str, ...] = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure", "banana", "beige", "black",
    "blue", "blush", "bordeaux", "bronze", "brown", "burgundy", "camel", "camo", "caramel",
    "champagne", "charcoal", "cheetah", "chestnut", "chocolate", "christmas", "coffee", "cognac",
    "copper", "coral", "cranberry", "cream", "crystal", "dark", "denim", "eggplant", "elephant",
    "espresso", "fuchsia", "gold", "granite", "grape", "graphite", "grass", "gray", "green",
    "grey", "heather", "indigo", "ivory", "ivy", "khaki", "lavender", "lemon", "leopard", "light",
    "lilac", "lime", "magenta", "maroon", "mauve", "merlot", "midnight", "mint", "mocha",
    "multicolor", "mushroom", "mustard", "natural", "navy", "nude", "olive", "orange", "peach",
    "pewter", "pink", "plum", "purple", "rainbow", "red", "rose", "royal", "rust", "sand",
    "sapphire", "seashell", "silver", "skull", "slate", "steel", "stone", "stonewash",
    "sunflower", "tan", "taupe", "teal", "tiger", "turquoise", "violet", "walnut", "wheat",
    "white", "wine", "yellow",
)  # fmt: skip
"""Upstream's colour vocabulary, in upstream's order (the first one contained wins)."""


def normalize_color(value: str) -> str:
    """The first word of :data:`COLOR_SET` contained in ``value`` (substring test), else ``value``.

    >>> normalize_color("light blue"), normalize_color("pack of 2")
    ('blue', 'pack of 2')
    """
    for color in COLOR_SET:
        if color in value:
            return color
    return value


def _full_process(text: str) -> str:
    """thefuzz's ``full_process(force_ascii=True)``: ASCII only, lower case, alnum tokens."""
    return fuzz_utils.default_process(text.encode("ascii", "ignore").decode())


def fuzzy_score(a: str, b: str) -> int:
    """thefuzz-compatible ``token_set_ratio`` of ``a`` and ``b``: an int in ``[0, 100]``."""
    return int(round(fuzz.token_set_ratio(a, b, processor=_full_process)))


def fuzzy_match(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` match for the reward (score strictly above 85)."""
    return fuzzy_score(a, b) > FUZZY_THRESHOLD


# ------------------------------------------------------------------------ title nouns
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "nor",
        "for",
        "of",
        "in",
        "on",
        "at",
        "to",
        "by",
        "with",
        "from",
        "into",
        "onto",
        "over",
        "under",
        "up",
        "down",
        "out",
        "off",
        "as",
        "per",
        "via",
        "vs",
        "than",
        "then",
        "so",
        "if",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "he",
        "she",
        "they",
        "we",
        "you",
        "i",
        "me",
        "my",
        "our",
        "your",
        "their",
        "his",
        "her",
        "them",
        "us",
        "not",
        "no",
        "yes",
        "all",
        "any",
        "each",
        "every",
        "both",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "too",
        "very",
        "can",
        "will",
        "just",
        "set",
        "pack",
        "pcs",
        "pc",
        "count",
        "piece",
        "pieces",
        "inch",
        "inches",
        "ft",
        "oz",
        "fl",
        "lb",
        "lbs",
        "ml",
        "mm",
        "cm",
        "g",
        "kg",
    ]
)
_TOKEN = re.compile(r"[a-z][a-z0-9'\-]*[a-z0-9]|[a-z]")


def heuristic_nouns(text: str) -> list[str]:
    """Deterministic stand-in for spaCy's ``NOUN``/``PROPN`` tokens of a product name.

    Keeps every lower-cased alphabetic token (letters first; digits, hyphens and apostrophes
    allowed inside) that is not a function word or a unit/quantity word. Product names are mostly
    noun compounds and brand names, so this over-counts only adjectives; for the purchased
    product that makes ``title_score`` slightly generous, never for the target itself (whose
    score is 1 under both backends).
    """
    return [token for token in _TOKEN.findall(text.lower()) if token not in _STOPWORDS]


@lru_cache(maxsize=1)
def _spacy_nlp() -> Any:
    if importlib.util.find_spec("en_core_web_sm") is None:  # without the model spaCy cannot
        return None  # tag; importing spaCy only to learn that costs ~3 s per process
    try:
        import spacy

        return spacy.load("en_core_web_sm", disable=["parser", "ner", "lemmatizer"])
    except Exception:  # spaCy or its English model missing: use the heuristic
        return None


def spacy_nouns(text: str) -> list[str]:
    """Upstream's extraction: lower-cased tokens spaCy tags ``NOUN``/``PROPN`` (needs spaCy)."""
    nlp = _spacy_nlp()
    if nlp is None:
        raise RuntimeError("spaCy with en_core_web_sm is not installed")
    return [t.text.lower() for t in nlp(text) if t.pos_ in ("PNOUN", "NOUN", "PROPN")]


NOUN_BACKEND = "spacy" if _spacy_nlp() is not None else "heuristic"
"""``"spacy"`` when upstream's noun extraction is available, else ``"heuristic"``."""


@lru_cache(maxsize=65_536)
def title_nouns(text: str) -> tuple[str, ...]:
    """Nouns of a product name with the best available backend (see module docstring)."""
    return tuple(spacy_nouns(text) if NOUN_BACKEND == "spacy" else heuristic_nouns(text))


# --------------------------------------------------------------------------- factors
def category_segments(product_category: str) -> set[str]:
    """The stripped ``›``-separated segments of a breadcrumb, as a set."""
    return {segment.strip() for segment in product_category.split(CATEGORY_SEPARATOR)}


def type_reward(
    purchased: Mapping[str, Any],
    goal: Mapping[str, Any],
    nouns: Callable[[str], Sequence[str]] = title_nouns,
) -> dict[str, Any]:
    """``r_type`` and its signals: ``query_match``, ``category_match``, ``title_score``."""
    query_match = purchased["query"] == goal["query"]
    shared = category_segments(purchased["product_category"]) & category_segments(
        goal["product_category"]
    )
    category_match = len(shared) >= 2
    desired = list(nouns(goal["name"]))  # upstream divides by the list length (duplicates count)
    shared_nouns = set(nouns(purchased["name"])) & set(desired)
    title_score = len(shared_nouns) / len(desired) if desired else 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return {
        "r_type": r_type,
        "query_match": query_match,
        "category_match": category_match,
        "title_score": title_score,
    }


def attribute_reward(purchased: Mapping[str, Any], goal: Mapping[str, Any]) -> tuple[float, int]:
    """``(share of goal attributes matched, number matched)`` for the purchased product."""
    goal_attributes: Sequence[str] = goal["attributes"]
    matches = 0
    for wanted in goal_attributes:
        if any(fuzzy_match(have, wanted) for have in purchased["Attributes"]) or (
            wanted in purchased["Title"].lower()
            or wanted in " ".join(purchased["BulletPoints"]).lower()
            or wanted in purchased["Description"].lower()
        ):
            matches += 1
    share = matches / len(goal_attributes) if goal_attributes else 0.0
    return share, matches


def option_reward(selected: Iterable[str], goal_options: Iterable[str]) -> tuple[float | None, int]:
    """``(share of goal options matched or None without goal options, number matched)``."""
    chosen = [normalize_color(option) for option in selected]
    wanted = [normalize_color(option) for option in goal_options]
    matches = sum(1 for goal in wanted if any(fuzzy_match(have, goal) for have in chosen))
    return (matches / len(wanted) if wanted else None), matches


def price_reward(price: float, price_upper: float) -> bool:
    """Whether the paid ``price`` is within the goal's ceiling."""
    return price <= price_upper


def goal_option_values(goal: Mapping[str, Any]) -> list[str]:
    """Goal options as a list of values (upstream stores a list, or a dict name -> value)."""
    options = goal["goal_options"]
    return list(options.values()) if isinstance(options, Mapping) else list(options)


def purchase_reward(
    purchased: Mapping[str, Any],
    goal: Mapping[str, Any],
    price: float,
    options: Mapping[str, str],
) -> tuple[float, dict[str, Any]]:
    """The total WebShop reward in ``[0, 1]`` and its factors (upstream's verbose info).

    Args:
        purchased: the bought product (normalised product dict).
        goal: the goal dict.
        price: the price paid.
        options: the selected options, option name -> value.
    """
    type_info = type_reward(purchased, goal)
    r_attr, attr_matches = attribute_reward(purchased, goal)
    wanted_options = goal_option_values(goal)
    r_option, option_matches = option_reward(options.values(), wanted_options)
    r_price = price_reward(price, goal["price_upper"])
    denominator = len(goal["attributes"]) + len(wanted_options) + 1
    total = (attr_matches + option_matches + int(r_price)) / denominator * type_info["r_type"]
    info = {**type_info, "r_att": r_attr, "r_option": r_option, "r_price": r_price}
    info["w_att"] = len(goal["attributes"]) / denominator
    info["w_option"] = len(wanted_options) / denominator
    info["w_price"] = 1 / denominator
    return total, info


# ----------------------------------------------------------------- upstream's names
# ``web_agent_site/engine/goal.py`` names and signatures, so code and tests port without a
# rename table. Differences, all outside upstream's own tests: a goal without attributes gives
# ``r_attr = 0`` (upstream divides by zero); dict goal options are matched by value (upstream
# passes ``(name, value)`` pairs to the fuzzy matcher, which adds the name's tokens).


def get_type_reward(purchased_product: Mapping[str, Any], goal: Mapping[str, Any]) -> dict[str, Any]:
    """Upstream's ``get_type_reward``: :func:`type_reward`."""
    return type_reward(purchased_product, goal)


def get_attribute_reward(
    purchased_product: Mapping[str, Any], goal: Mapping[str, Any]
) -> tuple[float, int]:
    """Upstream's ``get_attribute_reward``: :func:`attribute_reward`."""
    return attribute_reward(purchased_product, goal)


def get_option_reward(
    purchased_options: Iterable[str], goal_options: Iterable[str]
) -> tuple[float | None, int]:
    """Upstream's ``get_option_reward``: :func:`option_reward`."""
    return option_reward(purchased_options, goal_options)


def get_reward(
    purchased_product: Mapping[str, Any],
    goal: Mapping[str, Any],
    price: float,
    options: Mapping[str, str],
    **kwargs: Any,
) -> float | tuple[float, dict[str, Any]]:
    """Upstream's ``get_reward``: the total reward, or ``(total, factors)`` with
    ``verbose=True`` (:func:`purchase_reward`)."""
    total, info = purchase_reward(purchased_product, goal, price, options)
    return (total, info) if kwargs.get("verbose", False) else total
