"""A small discrete action set for non-LLM agents (``AdmissibleDiscrete``, MaskablePPO, random).

WebShop's search bar takes free text (the admissible list shows it as ``search[<query>]``), which a
discrete agent cannot fill in. This module replaces that placeholder with a few searches derived
from the instruction -- public text, shown on every page -- and never from the goal's hidden
fields (target product, attributes, options):

1. the whole instruction (what the easy curriculum's policy searches, see
   :mod:`sdgym.envs.webshop.curriculum`);
2. the instruction without its price clause (``", and price lower than X dollars"``);
3. the product phrase: (2) without the request opening (``"i need a"``, ``"please get me"``, ...).

Duplicates are dropped. Every other admissible command is a click; the clicks keep the page's
buttons in a fixed order first (``buy now``, ``next >``, ``< prev``, ``back to search``, then the
sub pages), so one slot means the same button on every page, then the product links and options in
page order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sdgym.envs.webshop.pages import BACK_TO_SEARCH, BUY_NOW, NEXT_PAGE, PREV_PAGE, SUB_PAGES

SEARCH_PLACEHOLDER = "search[<query>]"
"""How the admissible list offers the search bar."""

BUTTON_ORDER: tuple[str, ...] = tuple(
    f"click[{name.lower()}]" for name in (BUY_NOW, NEXT_PAGE, PREV_PAGE, BACK_TO_SEARCH, *SUB_PAGES)
)
"""Buttons first, in this order, whenever the page shows them."""

_PRICE_CLAUSE = re.compile(r",?\s*(?:and\s+)?price lower than [\d.,]+ dollars\s*$", re.IGNORECASE)
_OPENING = re.compile(
    r"^(?:please\s+)?(?:i\s+need|i\s+want|i\s+would\s+like|i\s+am\s+looking\s+for|"
    r"i'm\s+looking\s+for|looking\s+for|find\s+me|get\s+me|buy\s+me|show\s+me)\s+"
    r"(?:(?:a|an|the|some)\s+)?",
    re.IGNORECASE,
)


def candidate_searches(instruction: str) -> list[str]:
    """The searches offered for ``instruction`` (see the module docstring), no duplicates."""
    whole = " ".join(instruction.split())
    without_price = _PRICE_CLAUSE.sub("", whole).strip(" ,")
    product = _OPENING.sub("", without_price).strip(" ,")
    queries = [q for q in (whole, without_price, product) if q]
    return [f"search[{query}]" for query in dict.fromkeys(queries)]


def discrete_actions(instruction: str, admissible: Sequence[str]) -> list[str]:
    """``admissible`` with the search placeholder replaced by :func:`candidate_searches` and the
    clicks in slot order (fixed buttons first, then the rest in page order)."""
    searches = candidate_searches(instruction) if SEARCH_PLACEHOLDER in admissible else []
    clicks = [a for a in admissible if a != SEARCH_PLACEHOLDER]
    buttons = [b for b in BUTTON_ORDER if b in clicks]
    rest = [a for a in clicks if a not in BUTTON_ORDER]
    return searches + buttons + rest
