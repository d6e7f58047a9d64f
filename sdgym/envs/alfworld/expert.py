"""The privileged expert: a plan that solves the game from the current state.

While the agent's valid commands are a prefix of the stored walkthrough, the plan is the rest of
the walkthrough (free). Once the agent deviates, fast-downward re-plans from the current state
(what alfworld's ``expert_type="planner"`` does every step); plans are cached per state (the
set of true facts), so revisiting a state costs nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any


class Expert:
    """Expert plans for one loaded game; call :meth:`observe` after every applied command."""

    def __init__(self, walkthrough: list[str] | None, cache_size: int = 256) -> None:
        self.walkthrough = list(walkthrough or [])
        self.history: list[str] = []
        self._cache: OrderedDict[frozenset[str], list[str]] = OrderedDict()
        self._cache_size = cache_size

    def reset(self) -> None:
        """Forget the commands of the previous episode (keeps the plan cache)."""
        self.history = []

    def observe(self, command: str) -> None:
        """Record a command the engine applied."""
        self.history.append(command)

    @property
    def on_walkthrough(self) -> bool:
        """Whether the applied commands so far follow the stored walkthrough."""
        n = len(self.history)
        return bool(self.walkthrough) and self.history == self.walkthrough[:n]

    def plan(self, pddl_env: Any) -> list[str]:
        """Commands that solve the game from ``pddl_env``'s current state ([] once won)."""
        if self.on_walkthrough:
            return self.walkthrough[len(self.history) :]
        state = pddl_env._pddl_state
        if state.check_goal():
            return []
        key = frozenset(str(fact) for fact in state.facts)
        if key not in self._cache:
            self._cache[key] = list(state.replan(pddl_env._entity_infos))
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        return list(self._cache[key])
