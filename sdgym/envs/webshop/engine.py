"""WebShop's session logic: which action leads from which page to which page.

This mirrors upstream's text environment (``web_agent_text_env.py``: ``SimServer.receive`` and
``WebAgentTextEnv.step``) without Flask or HTML parsing:

- ``search[keywords]`` (search page only) -- run the search (keywords lower-cased), show
  results page 1, clear the selected product and options.
- ``click[back to search]`` -- back to the search page.
- ``click[next >]`` / ``click[< prev]`` on a results page -- the next / previous page of hits.
- ``click[<asin>]`` on a results page -- the product's item page.
- ``click[<option value>]`` on an item page -- select that value for its option.
- ``click[description|features|reviews|attributes]`` -- the item's sub page
  (``attributes`` only with ``show_attrs``); ``click[< prev]`` there returns to the item page
  (options kept), and on the item page returns to the results page (options cleared).
- ``click[buy now]`` -- buy the open product with the selected options; the session ends with
  :func:`~sdgym.envs.webshop.reward.purchase_reward`.

Differences from upstream, on purpose: an action upstream silently ignores (unknown verb,
clicking something not on the page, ``click[search]``, an empty search) raises
:class:`~sdgym.core.InvalidAction` instead; and ``search[...]`` is valid only where the page has
the search bar (upstream also accepts it elsewhere), so the admissible-action list is exactly the
set of valid actions. Action verbs are matched case-insensitively.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sdgym.core import InvalidAction
from sdgym.envs.webshop.pages import (
    BACK_TO_SEARCH,
    BUY_NOW,
    LINK,
    NEXT_PAGE,
    OPTION,
    PREV_PAGE,
    SUB_PAGES,
    Page,
    build_page,
)
from sdgym.envs.webshop.reward import purchase_reward
from sdgym.envs.webshop.schema import Catalog
from sdgym.envs.webshop.search import ProductSearch
from sdgym.envs.webshop.state import DONE, ITEM, RESULTS, SEARCH, SUB_PAGE, ShopState

SEARCH_TEMPLATE = "search[<query>]"
"""How the search bar appears among admissible actions: any ``search[...]`` text is accepted."""

_ACTION = re.compile(r"^([A-Za-z_]+)\s*\[(.*)\]$", re.DOTALL)


def search_keywords(argument: str) -> tuple[str, ...]:
    """The keywords a ``search[argument]`` runs: lower-cased and split on whitespace (upstream)."""
    return tuple(argument.lower().split())


def parse_action(command: str) -> tuple[str, str]:
    """``(verb, argument)`` of ``verb[argument]``; the verb lower-cased.

    Raises:
        InvalidAction: the command is not of that form.
    """
    match = _ACTION.match(command.strip())
    if match is None:
        raise InvalidAction(
            f"cannot parse {command!r}; actions look like search[your query] or click[a button]"
        )
    return match.group(1).lower(), match.group(2).strip()


class ShopEngine:
    """Pages and transitions over one catalogue; stateless (states are :class:`ShopState`).

    Args:
        catalog: the products and prices.
        index: the search index over ``catalog.products``.
        show_attrs: offer the ``Attributes`` sub page on item pages (upstream ``show_attrs``).
    """

    def __init__(self, catalog: Catalog, index: ProductSearch, show_attrs: bool = False) -> None:
        self.catalog = catalog
        self.index = index
        self.show_attrs = show_attrs

    def results(self, state: ShopState) -> tuple[str, ...]:
        """The asins the state's last search returned (empty before any search)."""
        return self.index.search(state.query) if state.keywords else ()

    def page(self, state: ShopState, instruction: str) -> Page:
        """The page ``state`` shows to an agent with this ``instruction``."""
        return build_page(state, self.catalog, self.results(state), instruction, self.show_attrs)

    def available_actions(self, state: ShopState) -> list[str]:
        """Every valid command now: :data:`SEARCH_TEMPLATE` where the search bar is, and
        ``click[name]`` for every clickable name of the page (upstream's ``clickables``)."""
        page = self.page(state, "")
        actions = [SEARCH_TEMPLATE] if page.has_search_bar else []
        return actions + [f"click[{name}]" for name in page.clickables()]

    def step(self, state: ShopState, command: str, goal: Mapping[str, Any]) -> ShopState:
        """The state after ``command``; raises :class:`InvalidAction` and changes nothing if the
        command cannot be applied. ``goal`` scores a purchase."""
        if state.page == DONE:
            raise InvalidAction("the purchase is complete; the episode is over")
        verb, argument = parse_action(command)
        if verb == "search":
            return self._search(state, argument)
        if verb == "click":
            return self._click(state, argument, goal)
        raise InvalidAction(f"unknown action {verb!r}; use search[...] or click[...]")

    def _search(self, state: ShopState, argument: str) -> ShopState:
        if state.page != SEARCH:
            raise InvalidAction("there is no search bar on this page; click[back to search] first")
        keywords = search_keywords(argument)
        if not keywords:
            raise InvalidAction("search[...] needs keywords, e.g. search[red running shoes]")
        return replace(
            state,
            page=RESULTS,
            keywords=keywords,
            page_number=1,
            asin=None,
            options=(),
            sub_page=None,
        )

    def _click(self, state: ShopState, argument: str, goal: Mapping[str, Any]) -> ShopState:
        name = argument.lower()
        clickables = self.page(state, "").clickables()
        element = clickables.get(name) or clickables.get(argument)
        if element is None:
            shown = ", ".join(sorted(clickables)) or "nothing"
            raise InvalidAction(f"{argument!r} is not clickable on this page; clickable: {shown}")
        if element.kind == LINK:
            return replace(
                state,
                page=ITEM,
                asin=element.text,
                options=(),
                visited=state.visited | {element.text},
            )
        if element.kind == OPTION:
            return replace(state.with_option(element.group, element.text), page=ITEM)
        label = element.text
        if label == BACK_TO_SEARCH:
            return ShopState()  # upstream starts the session over (visited asins too)
        if label == NEXT_PAGE:
            return replace(state, page_number=state.page_number + 1)
        if label == PREV_PAGE and state.page == RESULTS:
            return replace(state, page_number=max(1, state.page_number - 1))
        if label == PREV_PAGE and state.page == ITEM:
            return replace(state, page=RESULTS, asin=None, options=())
        if label == PREV_PAGE and state.page == SUB_PAGE:
            return replace(state, page=ITEM, sub_page=None)
        if label in SUB_PAGES:
            return replace(state, page=SUB_PAGE, sub_page=label)
        if label == BUY_NOW:
            return self._buy(state, goal)
        raise InvalidAction(f"{argument!r} does nothing here")  # pragma: no cover

    def _buy(self, state: ShopState, goal: Mapping[str, Any]) -> ShopState:
        asin = state.asin or ""
        reward, info = purchase_reward(
            self.catalog.by_asin[asin], goal, self.catalog.prices[asin], state.selected
        )
        return replace(state, page=DONE, reward=reward, reward_info=info)
