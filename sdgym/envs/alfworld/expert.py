"""The privileged expert: a plan that solves the game from the current state.

While the agent's valid commands are a prefix of the stored walkthrough, the plan is the rest of
the walkthrough (free). Once the agent deviates, the handcoded expert (:mod:`.handcoded`) plans
from the current PDDL facts (microseconds); for a state it does not model, or whose first command
it gets wrong, fast-downward re-plans from the current state (what alfworld's
``expert_type="planner"`` does every step) in a capped child (:mod:`.capped`), and an empty plan
is returned if that exceeds its cap. Plans are cached per state (the set of true facts).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from sdgym.envs.alfworld.capped import PlanLimits, PlanningLimitExceeded, run_capped
from sdgym.envs.alfworld.handcoded import handcoded_plan

REPLAN_LIMITS = PlanLimits(memory_bytes=1 << 30, timeout_s=30.0)
"""Cap of one fallback planner call while an episode runs."""


class Expert:
    """Expert plans for one loaded game; call :meth:`observe` after every applied command."""

    def __init__(
        self,
        walkthrough: list[str] | None,
        task_type: str = "",
        params: Mapping[str, Any] | None = None,
        cache_size: int = 256,
    ) -> None:
        self.walkthrough = list(walkthrough or [])
        self.task_type = task_type
        self.params = dict(params or {})
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

    def plan(self, pddl_env: Any, admissible: list[str] | None = None) -> list[str]:
        """Commands that solve the game from ``pddl_env``'s current state ([] once won).

        ``admissible``: the commands valid now; a handcoded plan whose first command is not
        among them is replaced by the planner's."""
        if self.on_walkthrough:
            return self.walkthrough[len(self.history) :]
        state = pddl_env._pddl_state
        if state.check_goal():
            return []
        key = frozenset(str(fact) for fact in state.facts)
        if key not in self._cache:
            self._cache[key] = self._search(pddl_env, admissible)
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        return list(self._cache[key])

    def _search(self, pddl_env: Any, admissible: list[str] | None) -> list[str]:
        state, names = pddl_env._pddl_state, pddl_env._entity_infos
        plan = handcoded_plan(state.facts, self.params, self.task_type, names)
        if plan and (admissible is None or plan[0] in admissible):
            return plan
        try:
            return list(run_capped(lambda: list(state.replan(names)), REPLAN_LIMITS))
        except PlanningLimitExceeded:
            return []
