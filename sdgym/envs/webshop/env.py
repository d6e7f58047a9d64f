"""``sdgym/WebShop-v0``: WebShop (Yao et al. 2022) as an sdgym :class:`~sdgym.core.TextEnv`.

The agent reads a shopping instruction, searches a catalogue, opens products, selects options
and clicks ``Buy Now``; the episode's return is WebShop's purchase reward in ``[0, 1]`` (granted
at the purchase, which ends the episode), and the task is won when that reward is exactly 1.

Example:
    >>> import gymnasium as gym, sdgym
    >>> env = gym.make("sdgym/WebShop-v0", size="tiny")
    >>> obs, info = env.reset(seed=0, options={"split": "test"})
    >>> obs.startswith("WebShop [SEP] Instruction:")
    True
    >>> for action in info["privileged"]["expert_plan"]:
    ...     obs, reward, terminated, truncated, info = env.step(action)
    >>> info["won"], terminated
    (True, True)

Kwargs of ``gym.make`` (all optional):
    size: generated catalogue size, ``"full"`` (10,000 products, 10,455 goals), ``"small"``
        (2,000) or ``"tiny"`` (300, for tests).
    catalog_seed: seed of the generated catalogue (default 0).
    product_file, instruction_file, attribute_file: upstream WebShop JSON files to use instead
        of a generated catalogue (see :mod:`sdgym.envs.webshop.loaders`); ``num_products``
        keeps the first N products.
    observation_mode: ``"text"`` (default; upstream's ``[SEP]``-joined text), ``"text_rich"``
        or ``"html"``.
    show_attrs: offer the ``Attributes`` sub page (upstream's ``show_attrs``; default False).
    mode: ``"text"`` (default; the engine in-process, no Flask, no socket) or ``"browser"``
        (headless Chromium on the WebShop Flask site, see :mod:`sdgym.envs.webshop.browser`;
        needs ``sdgym[browser]`` and Debian's ``chromium chromium-driver``). Both modes take the
        same commands and give the same observations, rewards and info.
    search_backend: the retriever behind the search bar, ``"bm25"`` (bm25s, default) or
        ``"lucene"`` (pyserini, upstream's engine); see :mod:`sdgym.envs.webshop.search`.
    privileged, render_mode: see :class:`~sdgym.core.TextEnv`.

Splits (``reset(options={"split": ...})``): ``train``, ``val``, ``test`` (about 80/10/10, see
:mod:`sdgym.envs.webshop.goals`), and the curriculum subsets ``easy_train`` / ``easy_val`` /
``easy_test`` of ``train`` / ``val`` / ``test``: goals that ``search[<instruction>]``, ``click[<first result>]``,
``click[buy now]`` wins (see :mod:`sdgym.envs.webshop.curriculum`).

Info: the public keys of DESIGN.md §2. ``admissible_actions`` lists ``search[<query>]`` where
the page has a search bar (any query text is accepted in its place) and ``click[name]`` for
every clickable on the page. The purchase step adds ``reward_info`` (the reward's factors).
``info["privileged"]``: ``goal`` (``goal_id``, ``asin``, ``instruction``, ``attributes``,
``goal_options``, ``price_upper``, ``query``, ``category``, ``product_category``, ``name``),
``expert_plan`` and ``expert_action`` from the current state (see
:mod:`sdgym.envs.webshop.expert`), and ``text`` (the goal and plan in words).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sdgym.core import EngineStep, InvalidAction, TextEnv
from sdgym.envs.webshop.catalog import generated_shop
from sdgym.envs.webshop.curriculum import EASY_SPLITS, easy_query
from sdgym.envs.webshop.curriculum import easy_splits as easy_goal_splits
from sdgym.envs.webshop.discrete_actions import discrete_actions
from sdgym.envs.webshop.engine import ShopEngine
from sdgym.envs.webshop.expert import Expert
from sdgym.envs.webshop.loaders import load_upstream
from sdgym.envs.webshop.pages import OBSERVATION_MODES
from sdgym.envs.webshop.reward import goal_option_values
from sdgym.envs.webshop.search import DEFAULT_BACKEND, ProductSearch
from sdgym.envs.webshop.skills import SKILLS
from sdgym.envs.webshop.state import DONE, ShopState

if TYPE_CHECKING:
    from sdgym.envs.webshop.browser import BrowserShop

MODES: tuple[str, ...] = ("text", "browser")


class WebShopEnv(TextEnv):
    """WebShop over a generated (or upstream) catalogue; see the module docstring."""
    agent_role: ClassVar[str] = "You are shopping online for the customer."
    history_window: ClassVar[int] = 2
    skills: ClassVar[dict[str, str]] = SKILLS

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 4}
    splits: ClassVar[tuple[str, ...]] = ("train", "val", "test", *EASY_SPLITS)
    easy_splits: ClassVar[dict[str, str]] = EASY_SPLITS

    def __init__(
        self,
        *,
        size: str = "full",
        catalog_seed: int = 0,
        product_file: str | None = None,
        instruction_file: str | None = None,
        attribute_file: str | None = None,
        num_products: int | None = None,
        observation_mode: str = "text",
        show_attrs: bool = False,
        mode: str = "text",
        search_backend: str = DEFAULT_BACKEND,
        privileged: bool = True,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(privileged=privileged, render_mode=render_mode)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if observation_mode not in OBSERVATION_MODES:
            raise ValueError(
                f"observation_mode must be one of {OBSERVATION_MODES}, got {observation_mode!r}"
            )
        if (product_file is None) != (instruction_file is None):
            raise ValueError("pass product_file and instruction_file together")
        if product_file is not None and instruction_file is not None:
            catalog = load_upstream(
                product_file,
                instruction_file,
                attribute_file,
                seed=catalog_seed,
                num_products=num_products,
            )
            index = ProductSearch(catalog.products, search_backend)
        else:
            catalog, index = generated_shop(size, int(catalog_seed), search_backend)
        self.catalog = catalog
        self.observation_mode = observation_mode
        self.engine = ShopEngine(catalog, index, show_attrs=show_attrs)
        self._easy: dict[str, list[dict[str, Any]]] | None = None
        self._goal: dict[str, Any] | None = None
        self._state = ShopState()
        self._expert: Expert | None = None
        self._plans: dict[ShopState, list[str]] = {}
        self.mode = mode
        self._browser: BrowserShop | None = None
        if mode == "browser":  # imported here: text mode needs neither Flask nor selenium
            from sdgym.envs.webshop.browser import BrowserShop

            self._browser = BrowserShop(self.engine)

    # ------------------------------------------------------------------ hooks
    def goals(self, split: str) -> list[dict[str, Any]]:
        """The goals of ``split``, in task-index order (easy splits made on first use)."""
        if split in EASY_SPLITS:
            if self._easy is None:
                self._easy = easy_goal_splits(self.catalog, self.engine.index)
            return self._easy[split]
        return self.catalog.goals_by_split.get(split, [])

    def _task_count(self, split: str) -> int:
        """Number of goals in ``split``."""
        return len(self.goals(split))

    def _start_task(self, split: str, task_index: int) -> str:
        self._goal = self.goals(split)[task_index]
        self._state = ShopState()
        self._expert = None
        self._plans = {}
        if self._browser is not None:
            self._browser.open(self._goal)
        return self._render()

    def _engine_step(self, command: str) -> EngineStep:
        if self._browser is not None:
            state = self._browser.act(command)
        else:
            state = self.engine.step(self._state, command, self.goal)
        self._state = state
        if state.page == DONE:
            return EngineStep(
                self._render(),
                score=state.reward,
                done=True,
                won=state.reward >= 1.0,
                info={"reward_info": dict(state.reward_info)},
            )
        return EngineStep(self._render(), score=0.0)

    def _task_id(self) -> str:
        return f"webshop/{self.goal['goal_id']}"

    def _task_type(self) -> str:
        return str(self.goal["category"])

    def _admissible_actions(self) -> list[str]:
        return [] if self._state.page == DONE else self.engine.available_actions(self._state)

    def _privileged_info(self) -> dict[str, Any]:
        plan = self.expert_plan()
        goal = self.goal
        public_goal = {
            "goal_id": goal["goal_id"],
            "asin": goal["asin"],
            "instruction": goal["instruction_text"],
            "attributes": list(goal["attributes"]),
            "goal_options": goal_option_values(goal),
            "price_upper": goal["price_upper"],
            "query": goal["query"],
            "category": goal["category"],
            "product_category": goal["product_category"],
            "name": goal["name"],
        }
        return {
            "goal": public_goal,
            "expert_plan": plan,
            "expert_action": plan[0] if plan else None,
            "text": self._privileged_text(public_goal, plan),
        }

    def candidate_actions(self, observation: str, info: dict[str, Any]) -> list[str]:
        """A small discrete action set for non-LLM agents (``AdmissibleDiscrete``): candidate
        searches from the instruction in place of ``search[<query>]``, buttons in a fixed order,
        then the page's other clicks (see :mod:`sdgym.envs.webshop.discrete_actions`)."""
        del observation, info  # the current page and its (public) instruction say it all
        return discrete_actions(self.goal["instruction_text"], self._admissible_actions())

    # ------------------------------------------------------------ helpers
    @property
    def goal(self) -> dict[str, Any]:
        """The current goal dict (raises before the first reset)."""
        if self._goal is None:
            raise RuntimeError("call reset() first")
        return self._goal

    @property
    def state(self) -> ShopState:
        """The current session state."""
        return self._state

    def expert_plan(self) -> list[str]:
        """The expert's actions from the current state to the purchase (cached per state)."""
        if self._expert is None:
            self._expert = self._make_expert()
        if self._state not in self._plans:
            try:
                self._plans[self._state] = self._expert.plan(self._state)
            except InvalidAction:  # pragma: no cover - the expert only emits valid actions
                self._plans[self._state] = []
        return list(self._plans[self._state])

    def _make_expert(self) -> Expert:
        """The goal's expert; on an easy split it follows the easy policy (instruction query,
        first hit, Buy Now), which a student can imitate from public information."""
        if self._split in EASY_SPLITS:
            hits = self.engine.index.search(easy_query(self.goal))
            if hits:
                return Expert(self.engine, self.goal, target=hits[0],
                              query=str(self.goal["instruction_text"]))
        return Expert(self.engine, self.goal)

    def _release(self) -> None:
        if self._browser is not None:
            self._browser.close()
            self._browser = None

    def _render(self) -> str:
        if self._browser is not None:
            return self._browser.observe(self.observation_mode)
        page = self.engine.page(self._state, self.goal["instruction_text"])
        return page.render(self.observation_mode)

    @staticmethod
    def _privileged_text(goal: dict[str, Any], plan: list[str]) -> str:
        options = ", ".join(goal["goal_options"]) or "none"
        price = (
            f"under ${goal['price_upper']:.2f}" if goal["price_upper"] < 1_000_000 else "any price"
        )
        steps = " -> ".join(plan) if plan else "nothing left to do"
        return (
            f"The target product is {goal['asin']} ({goal['name']}), a {goal['query']} in "
            f"{goal['category']}. It must have the attributes {', '.join(goal['attributes'])}; "
            f"select the options: {options}; price {price}. Expert plan: {steps}."
        )
