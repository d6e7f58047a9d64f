"""The privileged expert: the next action towards buying the goal product, from any state.

Policy (re-planned from wherever the agent is):

- search page: ``search[q]`` with the first of these queries that puts the target on results
  page 1 -- the instruction text itself (public, so the student can imitate it; on the easy
  splits it puts the target first), goal attributes + query, the same plus the goal option
  values, the target's title -- or else the one that ranks it highest;
- results page: the target's ``click[asin]`` if shown, ``click[next >]``/``click[< prev]``
  towards the page that shows it, else ``click[back to search]``;
- item page of another product: ``click[< prev]``; of the target: ``click[value]`` for each goal
  option not yet selected, then ``click[buy now]``;
- sub page: ``click[< prev]``; done page: nothing.

:meth:`Expert.plan` rolls the policy out on a copy of the state, so the plan is the exact
action list that solves the task from the current state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sdgym.envs.webshop.engine import ShopEngine
from sdgym.envs.webshop.pages import PRODUCT_WINDOW
from sdgym.envs.webshop.reward import fuzzy_match, goal_option_values, normalize_color
from sdgym.envs.webshop.state import DONE, ITEM, RESULTS, SEARCH, SUB_PAGE, ShopState

MAX_PLAN_LENGTH = 30


def resolve_goal_options(
    product: Mapping[str, Any], goal_options: list[str]
) -> list[tuple[str, str]]:
    """``(option name, value)`` on ``product`` for each goal option: the exact value if offered,
    else the first value that fuzzily matches it as the reward does. Goal options with no match,
    or whose value a click would assign to another option name, are dropped."""
    owner = {v: n for n, values in product["options"].items() for v in values}  # click target
    resolved: list[tuple[str, str]] = []
    for wanted in goal_options:
        exact = [(n, v) for n, values in product["options"].items() for v in values if v == wanted]
        fuzzy = [
            (n, v)
            for n, values in product["options"].items()
            for v in values
            if fuzzy_match(normalize_color(v), normalize_color(wanted))
        ]
        usable = [(n, v) for n, v in exact + fuzzy if owner[v] == n]
        choice = usable[0] if usable else None
        if choice is not None and choice[0] not in dict(resolved):
            resolved.append(choice)
    return resolved


class Expert:
    """The expert for one goal over one engine."""

    def __init__(self, engine: ShopEngine, goal: Mapping[str, Any], *,
                 target: str | None = None, query: str | None = None) -> None:
        """``target``/``query`` replace the goal's asin and the query search (the easy splits
        buy the first hit of the instruction, which wins by their definition)."""
        self.engine = engine
        self.goal = goal
        self.target = str(target or goal["asin"])
        product = engine.catalog.by_asin[self.target]
        self.options = resolve_goal_options(product, goal_option_values(goal))
        self._query: str | None = " ".join(query.lower().split()) if query else None

    @property
    def query(self) -> str:
        """The search query the expert types (computed once per goal)."""
        if self._query is None:
            base = " ".join([*self.goal["attributes"], self.goal["query"]])
            candidates = [
                str(self.goal["instruction_text"]),  # public: what a student can type too
                base,
                " ".join([base, *(value for _, value in self.options)]),
                self.engine.catalog.by_asin[self.target]["Title"],
            ]
            ranks = [self._rank(candidate.lower()) for candidate in candidates]
            best = min(range(len(candidates)), key=lambda i: (ranks[i] // PRODUCT_WINDOW, i))
            self._query = " ".join(candidates[best].lower().split())
        return self._query

    def _rank(self, query: str) -> int:
        hits = self.engine.index.search(query)
        return hits.index(self.target) if self.target in hits else len(hits) + PRODUCT_WINDOW

    def next_action(self, state: ShopState) -> str | None:
        """The expert's next command in ``state`` (``None`` once the purchase is done)."""
        if state.page == DONE:
            return None
        if state.page == SEARCH:
            return f"search[{self.query}]"
        if state.page == SUB_PAGE:
            return "click[< prev]"
        if state.page == ITEM:
            if state.asin != self.target:
                return "click[< prev]"
            selected = state.selected
            for name, value in self.options:
                if selected.get(name) != value:
                    return f"click[{value}]"
            return "click[buy now]"
        if state.page == RESULTS:
            hits = self.engine.results(state)
            if self.target not in hits:
                return "click[back to search]"
            wanted_page = hits.index(self.target) // PRODUCT_WINDOW + 1
            if wanted_page == state.page_number:
                return f"click[{self.target.lower()}]"
            return "click[next >]" if wanted_page > state.page_number else "click[< prev]"
        raise ValueError(f"unknown page {state.page!r}")  # pragma: no cover

    def plan(self, state: ShopState) -> list[str]:
        """The actions the expert takes from ``state`` until the purchase (simulated)."""
        actions: list[str] = []
        while len(actions) < MAX_PLAN_LENGTH:
            action = self.next_action(state)
            if action is None:
                break
            actions.append(action)
            state = self.engine.step(state, action, self.goal)
        return actions
