"""WebShop's pages as element lists, and their three renderings (html, text, text_rich).

Each page is what upstream's Jinja templates show, reduced to its visible elements in document
order: plain text, buttons, product links (asins on the results page) and option radio buttons
(item page). Upstream derives the clickable names from the HTML (button and product-link texts
lower-cased, option values as they are); :meth:`Page.clickables` does the same from the
elements, so what an agent can click is exactly what the page shows.

Renderings (``observation_mode``):

- ``"text"`` -- upstream's simple mode: element texts joined by ``" [SEP] "``.
- ``"text_rich"`` -- upstream's rich mode: one element per line, ``[button] X [button_]``
  around buttons, ``[clicked button] X [clicked button_]`` around selected options and visited
  products, and a ``You have clicked X.`` line first for each selected option.
- ``"html"`` -- a compact page with upstream's ids and classes (``search_input``,
  ``instruction-text``, ``btn``, ``product-link``, radio inputs named by option).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass

from sdgym.envs.webshop.schema import Catalog
from sdgym.envs.webshop.state import DONE, ITEM, RESULTS, SEARCH, SUB_PAGE, ShopState

PRODUCT_WINDOW = 10
BUY_NOW, NEXT_PAGE, PREV_PAGE, BACK_TO_SEARCH = "Buy Now", "Next >", "< Prev", "Back to Search"
SUB_PAGES: tuple[str, ...] = ("Description", "Features", "Reviews", "Attributes")
OBSERVATION_MODES: tuple[str, ...] = ("html", "text", "text_rich")

TEXT, BUTTON, LINK, OPTION = "text", "button", "product_link", "option"


@dataclass(frozen=True)
class Element:
    """One visible element: ``kind`` is text, button, product_link or option.

    ``group`` is the option name of an option; ``marked`` flags a selected option or a visited
    product link.
    """

    kind: str
    text: str
    group: str = ""
    marked: bool = False


@dataclass(frozen=True)
class Page:
    """A rendered page: its kind (a :data:`~sdgym.envs.webshop.state.PAGES` name) and elements."""

    kind: str
    elements: tuple[Element, ...]

    @property
    def has_search_bar(self) -> bool:
        """Whether the page holds the search form (only the search page does)."""
        return self.kind == SEARCH

    def clickables(self) -> dict[str, Element]:
        """Clickable name -> element, as upstream's ``text_to_clickable`` (later ones win).

        The search page's ``Search`` button is left out: upstream refuses ``click[search]``.
        """
        table: dict[str, Element] = {}
        for element in self.elements:
            if element.kind in (BUTTON, LINK):
                table[element.text.lower()] = element
            elif element.kind == OPTION:
                table[element.text] = element
        if self.has_search_bar:
            table.pop("search", None)
        return table

    def render(self, mode: str) -> str:
        """The page in observation mode ``mode`` (see the module docstring)."""
        if mode == "text":
            return " [SEP] ".join(element.text for element in self.elements)
        if mode == "text_rich":
            return _rich_text(self.elements)
        if mode == "html":
            return _html(self)
        raise ValueError(f"unknown observation mode {mode!r}; choose one of {OBSERVATION_MODES}")


def _texts(*texts: str) -> list[Element]:
    return [Element(TEXT, text) for text in texts]


def _buttons(*texts: str) -> list[Element]:
    return [Element(BUTTON, text) for text in texts]


def build_page(
    state: ShopState,
    catalog: Catalog,
    results: Sequence[str],
    instruction: str,
    show_attrs: bool = False,
) -> Page:
    """The page ``state`` shows. ``results`` are the asins the last search returned."""
    header = _texts("Instruction:", instruction)
    elements: list[Element]
    if state.page == SEARCH:
        elements = _texts("WebShop") + header + _buttons("Search")
    elif state.page == RESULTS:
        shown = results[
            (state.page_number - 1) * PRODUCT_WINDOW : state.page_number * PRODUCT_WINDOW
        ]
        elements = header + _buttons(BACK_TO_SEARCH)
        elements += _texts(f"Page {state.page_number} (Total results: {len(results)})")
        elements += _buttons(*([PREV_PAGE] if state.page_number > 1 else []), NEXT_PAGE)
        for asin in shown:
            product = catalog.by_asin[asin]
            elements.append(Element(LINK, asin, marked=asin in state.visited))
            elements += _texts(product["Title"], product["Price"])
    elif state.page == ITEM:
        product = catalog.by_asin[state.asin or ""]
        selected = state.selected
        elements = header + _buttons(BACK_TO_SEARCH, PREV_PAGE)
        for name, values in product["options"].items():
            elements.append(Element(TEXT, name))
            elements += [
                Element(OPTION, value, group=name, marked=selected.get(name) == value)
                for value in values
            ]
        elements += _texts(
            product["Title"], f"Price: {product['Price']}", f"Rating: {product['Rating']}"
        )
        elements += _buttons(*(SUB_PAGES if show_attrs else SUB_PAGES[:3]), BUY_NOW)
    elif state.page == SUB_PAGE:
        product = catalog.by_asin[state.asin or ""]
        elements = header + _buttons(BACK_TO_SEARCH, PREV_PAGE)
        elements += _texts(*_sub_page_texts(state.sub_page or "", product))
    elif state.page == DONE:
        elements = _texts(
            "Thank you for shopping with us!",
            "Purchased",
            "asin",
            state.asin or "",
            "options",
            json.dumps(state.selected),
            "Your score (min 0.0, max 1.0)",
            f"{state.reward}",
        )
    else:
        raise ValueError(f"unknown page {state.page!r}")
    return Page(state.page, tuple(element for element in elements if element.text != ""))


def _sub_page_texts(sub_page: str, product: dict) -> list[str]:
    if sub_page == "Description":
        return [product["Description"]]
    if sub_page == "Features":
        return list(product["BulletPoints"])
    if sub_page == "Reviews":
        texts: list[str] = []
        for review in product["Reviews"]:
            texts += [
                f'"{review.get("title", "")}"',
                str(review.get("score", "")),
                str(review.get("body", "")),
            ]
        return texts
    return list(product["Attributes"]) + [
        product["category"],
        product["query"],
        product["product_category"],
    ]


def _rich_text(elements: Sequence[Element]) -> str:
    lines: list[str] = []
    clicked: list[str] = []
    for element in elements:
        if element.kind == BUTTON:
            lines.append(f"[button] {element.text} [button_]")
        elif element.kind == OPTION:
            tag = "clicked button" if element.marked else "button"
            lines.append(f"  [{tag}] {element.text} [{tag}_]")
            if element.marked:
                clicked.append(f"You have clicked {element.text}.")
        elif element.kind == LINK:
            tag = "clicked button" if element.marked else "button"
            lines.append(f"\n[{tag}] {element.text} [{tag}_]")
        else:
            lines.append(element.text)
    return "\n".join(clicked[::-1] + lines) + "\n"


def _html(page: Page) -> str:
    parts = ["<html><body>"]
    elements = iter(page.elements)
    for element in elements:
        text = html.escape(element.text)
        if element.kind == BUTTON:
            parts.append(f'<button class="btn" type="submit">{text}</button>')
        elif element.kind == LINK:
            parts.append(f'<h4 class="product-asin"><a class="product-link">{text}</a></h4>')
        elif element.kind == OPTION:
            group = html.escape(element.group, quote=True)
            value = html.escape(element.text, quote=True)
            checked = " checked" if element.marked else ""
            parts.append(
                f'<input type="radio" name="{group}" value="{value}"{checked}><label>{text}</label>'
            )
        elif element.text == "Instruction:":
            instruction = html.escape(next(elements, Element(TEXT, "")).text)
            parts.append(f'<div id="instruction-text"><h4>Instruction:<br>{instruction}</h4></div>')
            if page.has_search_bar:
                parts.append('<input id="search_input" type="text" name="search_query">')
        else:
            parts.append(f"<p>{text}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
