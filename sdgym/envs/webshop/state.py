"""The state of one shopping session: which page is open and what the session remembers.

A :class:`ShopState` is immutable; the engine returns a new one per action, so the expert can
plan by simulating actions on a copy and an invalid action trivially changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

SEARCH, RESULTS, ITEM, SUB_PAGE, DONE = "search", "results", "item", "sub_page", "done"
PAGES: tuple[str, ...] = (SEARCH, RESULTS, ITEM, SUB_PAGE, DONE)


@dataclass(frozen=True)
class ShopState:
    """Where the session is.

    Attributes:
        page: one of :data:`PAGES`.
        keywords: the last search's keywords (upstream splits the query on spaces).
        page_number: the results page shown (1-based; upstream lets it run past the last one).
        asin: the product whose item page (or sub page) is open, or that was bought.
        options: selected options of the open product, option name -> value, in click order.
        sub_page: ``"Description"``, ``"Features"``, ``"Reviews"`` or ``"Attributes"``.
        visited: asins whose item page was opened this session (rich text marks them).
        reward: the purchase reward once ``page == "done"``.
        reward_info: the reward's factors once ``page == "done"``.
    """

    page: str = SEARCH
    keywords: tuple[str, ...] = ()
    page_number: int = 1
    asin: str | None = None
    options: tuple[tuple[str, str], ...] = ()
    sub_page: str | None = None
    visited: frozenset[str] = frozenset()
    reward: float = 0.0
    reward_info: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def query(self) -> str:
        """The last search's keywords joined by spaces."""
        return " ".join(self.keywords)

    @property
    def selected(self) -> dict[str, str]:
        """The selected options as a dict."""
        return dict(self.options)

    def with_option(self, name: str, value: str) -> ShopState:
        """This state with option ``name`` set to ``value``."""
        options = dict(self.options)
        options[name] = value
        return replace(self, options=tuple(options.items()))
