"""The WebShop site for people (and for the browser env): Flask over the text env's engine.

The site keeps one :class:`Session` per visitor, addressed by a session id in the URL as
upstream WebShop does (``/<session_id>/...``). Every request that changes a session goes through
:meth:`ShopEngine.step <sdgym.envs.webshop.engine.ShopEngine.step>` with the same command the
text env would receive (``search[...]`` from the search form, ``click[<name>]`` from a button),
and every page is :meth:`ShopEngine.page` rendered by
:func:`~sdgym.envs.webshop.webpage.render_document`; so the site and the text env cannot drift
apart, and a purchase on the site scores exactly what it scores in text mode.

Routes:

- ``GET /`` -- start a session (``?split=test&task_index=3`` picks the goal; without
  ``task_index`` a random goal of the split) and redirect to its page;
- ``GET /<session_id>/`` -- the session's current page;
- ``POST /<session_id>/search`` (form field ``search_query``) and ``POST /<session_id>/click``
  (form field ``target``) -- apply the action, then redirect (303) to the session's page. An
  action the engine refuses changes nothing and shows its reason on the page. An action longer
  than the text env's limit (2,048 characters) is refused the same way, and a request body over
  :data:`MAX_REQUEST_BYTES` gets 413 without being read.

Example:
    >>> from sdgym.envs.webshop.site import create_app, shop_engine
    >>> engine, catalog = shop_engine("tiny")
    >>> client = create_app(engine, catalog.goals_by_split).test_client()
    >>> client.get("/?split=test&task_index=0").status_code
    303
"""

from __future__ import annotations

import random
import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, Response, abort, redirect, request

from sdgym.core import InvalidAction, TextEnv, clean_action
from sdgym.envs.webshop.engine import ShopEngine
from sdgym.envs.webshop.goals import SPLITS
from sdgym.envs.webshop.schema import Catalog
from sdgym.envs.webshop.state import ShopState
from sdgym.envs.webshop.webpage import render_document

MAX_REQUEST_BYTES = 4 * TextEnv.max_action_length + 1024
"""Largest request body the site reads: an action of the env's length limit, percent-encoded
(up to 3 bytes a character) with its form field name, fits."""

STORE_KEY = "sdgym_webshop_sessions"
"""Where :func:`create_app` puts its :class:`SessionStore` in ``app.extensions``."""


@dataclass
class Session:
    """One visitor's shopping session.

    Attributes:
        goal: the goal dict whose instruction the pages show and whose purchase is scored.
        state: the session's :class:`ShopState`.
        error: why the last action was refused, or ``None`` if it was applied.
        actions: how many actions reached the site (applied or refused).
    """

    goal: dict[str, Any]
    state: ShopState = field(default_factory=ShopState)
    error: str | None = None
    actions: int = 0


class SessionStore:
    """Thread-safe sessions of one site; the oldest are dropped beyond ``max_sessions``."""

    def __init__(self, engine: ShopEngine, max_sessions: int = 1_000) -> None:
        self.engine = engine
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def open(self, goal: dict[str, Any]) -> str:
        """Start a session on ``goal``; returns its (unguessable) id."""
        session_id = secrets.token_hex(8)
        with self._lock:
            self._sessions[session_id] = Session(goal)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        return session_id

    def get(self, session_id: str) -> Session | None:
        """The session, or ``None`` for an unknown id."""
        with self._lock:
            return self._sessions.get(session_id)

    def drop(self, session_id: str) -> None:
        """Forget a session (unknown ids are ignored)."""
        with self._lock:
            self._sessions.pop(session_id, None)

    def apply(self, session_id: str, command: str) -> Session:
        """Apply ``command`` to the session through the engine; a refusal sets ``error``.

        Raises:
            KeyError: unknown session id.
        """
        with self._lock:
            session = self._sessions[session_id]
            session.actions += 1
            cleaned, problem = clean_action(command, TextEnv.max_action_length)
            try:
                if cleaned is None:  # the text env's limits: same refusal on the site
                    raise InvalidAction(problem)
                session.state = self.engine.step(session.state, cleaned, session.goal)
                session.error = None
            except InvalidAction as error:
                session.error = str(error) or "invalid action"
            return session

    def document(self, session_id: str) -> str:
        """The HTML document of the session's current page."""
        with self._lock:
            session = self._sessions[session_id]
            state, error, goal = session.state, session.error, session.goal
        page = self.engine.page(state, goal["instruction_text"])
        return render_document(page, session_id, error)


def check_split(split: str) -> None:
    """Raise ValueError naming ``split`` and the served ones unless the site serves ``split``
    (a goal split of a catalogue; checked before one is built)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; the site serves {list(SPLITS)}")


def shop_engine(
    size: str = "full", catalog_seed: int = 0, show_attrs: bool = False
) -> tuple[ShopEngine, Catalog]:
    """The engine and catalogue the text env uses for a generated catalogue (shared cache)."""
    from sdgym.envs.webshop.catalog import generated_shop

    catalog, index = generated_shop(size, int(catalog_seed))
    return ShopEngine(catalog, index, show_attrs=show_attrs), catalog


def create_app(
    engine: ShopEngine,
    goals_by_split: Mapping[str, Sequence[dict[str, Any]]],
    *,
    store: SessionStore | None = None,
    default_split: str = "test",
    seed: int | None = None,
) -> Flask:
    """The WebShop Flask app over ``engine`` (see the module docstring for its routes).

    Args:
        engine: the shop (catalogue, search index, pages, transitions).
        goals_by_split: the goals ``GET /`` draws from, per split.
        store: the sessions (a new store if ``None``); also at ``app.extensions[STORE_KEY]``.
        default_split: the split of ``GET /`` without ``?split=``.
        seed: seed of the random goal choice (``None``: unseeded).
    """
    app = Flask("sdgym.envs.webshop.site")
    # a form holds one action: bodies beyond this are refused (413) before they are parsed
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    app.config["MAX_FORM_MEMORY_SIZE"] = MAX_REQUEST_BYTES
    sessions = store if store is not None else SessionStore(engine)
    app.extensions[STORE_KEY] = sessions
    rng = random.Random(seed)
    rng_lock = threading.Lock()

    @app.get("/")
    def start() -> Response:
        split = request.args.get("split", default_split)
        goals = goals_by_split.get(split) or abort(404, f"no goals in split {split!r}")
        raw_index = request.args.get("task_index")
        if raw_index is None:
            with rng_lock:
                index = rng.randrange(len(goals))
        elif raw_index.isdigit() and int(raw_index) < len(goals):
            index = int(raw_index)
        else:
            abort(404, f"task_index must be in [0, {len(goals)}) for split {split!r}")
        session_id = sessions.open(dict(goals[index]))
        return redirect(f"/{session_id}/", code=303)

    @app.get("/favicon.ico")
    def favicon() -> Response:
        return Response(status=204)

    @app.get("/<session_id>/")
    def show(session_id: str) -> Response:
        if sessions.get(session_id) is None:
            abort(404, "unknown session; start a new one at /")
        return Response(sessions.document(session_id), mimetype="text/html")

    @app.post("/<session_id>/search")
    def search(session_id: str) -> Response:
        return _act(session_id, f"search[{request.form.get('search_query', '')}]")

    @app.post("/<session_id>/click")
    def click(session_id: str) -> Response:
        return _act(session_id, f"click[{request.form.get('target', '')}]")

    def _act(session_id: str, command: str) -> Response:
        if sessions.get(session_id) is None:
            abort(404, "unknown session; start a new one at /")
        sessions.apply(session_id, command)
        return redirect(f"/{session_id}/", code=303)

    return app
