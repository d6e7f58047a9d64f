"""Browser mode: WebShop played through headless Chromium on the Flask site.

:class:`BrowserShop` serves :mod:`~sdgym.envs.webshop.site` on an ephemeral ``127.0.0.1`` port
(background thread) and drives it with :class:`~sdgym.envs.webshop.chromium.Chromium`. The
env's commands become real browser interactions:

- ``search[q]`` -- type ``q`` into the search box (``#search_input``) and press the Search button;
- ``click[name]`` -- click the button, product link or option whose name (as
  :meth:`Page.clickables <sdgym.envs.webshop.pages.Page.clickables>` names it) is ``name``.

The site applies each submitted action with the text env's engine; the session's resulting state
(and, at the purchase, its reward) is read back from the site's session store, so browser mode
scores exactly like text mode. The observation is rebuilt from the page the browser shows (each
element's visible ``innerText``, see :data:`~sdgym.envs.webshop.webpage.READ_PAGE_SCRIPT`) and
rendered like text mode (``"text"``, ``"text_rich"``); ``"html"`` is the browser's page source.
"""

from __future__ import annotations

import time
from typing import Any

from sdgym.core import InvalidAction
from sdgym.envs.webshop.chromium import Chromium
from sdgym.envs.webshop.engine import ShopEngine, parse_action
from sdgym.envs.webshop.pages import Element, Page
from sdgym.envs.webshop.server import BackgroundServer
from sdgym.envs.webshop.site import Session, SessionStore, create_app
from sdgym.envs.webshop.state import ShopState
from sdgym.envs.webshop.webpage import READ_PAGE_SCRIPT


class BrowserShop:
    """The site, its server thread and a headless browser on it; one session at a time.

    Args:
        engine: the shop the site serves (the text env's engine).
        page_load_timeout: seconds a page may take to load.

    Attributes:
        startup_seconds: wall time of starting the server and the browser.
    """

    def __init__(self, engine: ShopEngine, page_load_timeout: float = 30.0) -> None:
        started = time.perf_counter()
        self.timeout = page_load_timeout
        self.store = SessionStore(engine, max_sessions=4)
        self.server = BackgroundServer(create_app(engine, {}, store=self.store))
        try:
            self.chromium = Chromium(page_load_timeout=page_load_timeout)
        except BaseException:
            self.server.stop()
            raise
        self.driver: Any = self.chromium.driver
        self._session_id: str | None = None
        self._dom: tuple[Page, list[Any]] | None = None
        self.startup_seconds = time.perf_counter() - started

    @property
    def url(self) -> str:
        """The site's base URL (``http://127.0.0.1:<port>``)."""
        return self.server.url

    @property
    def session(self) -> Session:
        """The open session (raises before :meth:`open`)."""
        session = self.store.get(self._session_id or "")
        if session is None:
            raise RuntimeError("no open session; call open(goal) first")
        return session

    def open(self, goal: dict[str, Any]) -> None:
        """Start a new session on ``goal`` (dropping the previous one) and load its page."""
        if self._session_id is not None:
            self.store.drop(self._session_id)
        self._session_id = self.store.open(goal)
        self._navigate(lambda: self.driver.get(f"{self.url}/{self._session_id}/"))

    def act(self, command: str) -> ShopState:
        """Perform ``command`` in the browser; the session's new state.

        Raises:
            InvalidAction: the command is malformed, names nothing on the page, or the site
                refused it (the session is then unchanged).
        """
        verb, argument = parse_action(command)
        page, nodes = self._read()
        before = self.session.actions
        if verb == "search":
            self._search(page, argument)
        elif verb == "click":
            self._click(page, nodes, argument)
        else:
            raise InvalidAction(f"unknown action {verb!r}; use search[...] or click[...]")
        session = self.session
        if session.actions != before + 1:  # pragma: no cover - a browser/site mismatch
            raise RuntimeError(f"the browser did not submit {command!r} to the site")
        if session.error is not None:
            raise InvalidAction(session.error)
        return session.state

    def observe(self, mode: str) -> str:
        """The page the browser shows, as observation mode ``mode`` renders it."""
        if mode == "html":
            return str(self.driver.page_source)
        page, _ = self._read()
        return page.render(mode)

    def close(self) -> None:
        """Quit the browser (no process left), stop the server, remove temp dirs (idempotent)."""
        try:
            self.chromium.quit()
        finally:
            self.server.stop()

    # ------------------------------------------------------------ browser work
    def _read(self) -> tuple[Page, list[Any]]:
        """The shown page rebuilt from the DOM, and the DOM node of each of its elements."""
        if self._dom is None:
            kind, rows = self.driver.execute_script(READ_PAGE_SCRIPT)
            elements = [
                Element(row_kind, text, group=group, marked=bool(marked))
                for _, row_kind, text, group, marked in rows
            ]
            self._dom = Page(kind, tuple(elements)), [row[0] for row in rows]
        return self._dom

    def _search(self, page: Page, query: str) -> None:
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.common.by import By

        boxes = self.driver.find_elements(By.ID, "search_input")
        if not page.has_search_bar or not boxes:
            raise InvalidAction("there is no search bar on this page; click[back to search] first")
        box = boxes[0]
        if box.get_attribute("value"):  # a fresh search page has an empty box: skip the clear
            box.clear()
        try:
            box.send_keys(query)
        except WebDriverException:  # characters chromedriver cannot type (outside the BMP)
            self.driver.execute_script("arguments[0].value = arguments[1];", box, query)
        button = self.driver.find_element(By.ID, "search_button")
        self._navigate(button.click)

    def _click(self, page: Page, nodes: list[Any], argument: str) -> None:
        clickables = page.clickables()
        element = clickables.get(argument.lower()) or clickables.get(argument)
        if element is None:
            shown = ", ".join(sorted(clickables)) or "nothing"
            raise InvalidAction(f"{argument!r} is not clickable on this page; clickable: {shown}")
        node = next(n for e, n in zip(page.elements, nodes, strict=True) if e is element)
        self._navigate(node.click)

    def _navigate(self, action: Any) -> None:
        """Run ``action`` (a click or a ``get``) and wait until the next document has loaded.

        The old document gets a marker on its ``window``; the wait ends when the window has no
        marker (a new document) that is completely loaded. (Element staleness is not portable:
        Chromium 156 reports a stale node as an unknown error.)
        """
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.support.ui import WebDriverWait

        self._dom = None
        self.driver.execute_script("window.sdgymOldPage = true;")
        action()
        WebDriverWait(
            self.driver,
            self.timeout,
            poll_frequency=0.01,
            ignored_exceptions=(WebDriverException,),  # mid-navigation script errors
        ).until(lambda driver: driver.execute_script(_NEW_PAGE_LOADED))


_NEW_PAGE_LOADED = "return !window.sdgymOldPage && document.readyState === 'complete';"
