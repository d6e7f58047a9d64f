"""The sdgym environment ids, registered as data (entry points are strings: cheap import).

The four built-in envs are :data:`ENVIRONMENTS`. An installed package adds its own by declaring
an :class:`EnvEntry` in the entry-point group :data:`ENV_ENTRY_POINTS` (``sdgym.envs``), e.g. in
its ``pyproject.toml``::

    [project.entry-points."sdgym.envs"]
    echo = "my_package.registration:ECHO"   # an EnvEntry; its entry_point names a TextEnv

:func:`all_environments` lists both; ``import sdgym`` registers both with Gymnasium, and
``sdgym list`` / ``train`` / ``benchmark`` / ``eval`` use them alike.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym


@dataclass(frozen=True, kw_only=True)
class EnvEntry:
    """One registered environment: its id, entry point, step limit and optional extra."""

    env_id: str
    entry_point: str
    max_episode_steps: int
    extra: str
    requires: tuple[str, ...]
    description: str
    test_kwargs: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    """``gym.make`` keyword arguments that make the env small enough for unit tests."""

    def installed(self) -> bool:
        """Whether the Python packages this env's engine needs are importable."""
        return all(importlib.util.find_spec(module) is not None for module in self.requires)


ENVIRONMENTS: tuple[EnvEntry, ...] = (
    EnvEntry(
        env_id="sdgym/ALFWorld-v0",
        entry_point="sdgym.envs.alfworld.env:ALFWorldEnv",
        max_episode_steps=50,
        extra="alfworld",
        requires=("textworld", "alfworld"),
        description="household tasks on the ALFWorld/TextWorld PDDL engine",
        test_kwargs={"size": "small"},
    ),
    EnvEntry(
        env_id="sdgym/ScienceWorld-v0",
        entry_point="sdgym.envs.scienceworld.env:ScienceWorldEnv",
        max_episode_steps=30,
        extra="scienceworld",
        requires=("scienceworld",),
        description="elementary science experiments on the ScienceWorld simulator",
        test_kwargs={"task_names": ["chemistry-mix"]},
    ),
    EnvEntry(
        env_id="sdgym/SearchQA-v0",
        entry_point="sdgym.envs.searchqa.env:SearchQAEnv",
        max_episode_steps=4,
        extra="searchqa",
        requires=("bm25s",),
        description="Search-R1-style retrieval QA over a generated encyclopedia",
        test_kwargs={"size": "tiny"},
    ),
    EnvEntry(
        env_id="sdgym/WebShop-v0",
        entry_point="sdgym.envs.webshop.env:WebShopEnv",
        max_episode_steps=15,
        extra="webshop",
        requires=("rapidfuzz", "bm25s"),
        description="WebShop-style online shopping over a generated catalogue",
        test_kwargs={"size": "tiny"},
    ),
)


ENV_ENTRY_POINTS = "sdgym.envs"
"""Entry-point group through which installed packages add environments (each an EnvEntry)."""


@functools.cache
def plugin_environments() -> tuple[EnvEntry, ...]:
    """The :class:`EnvEntry` of every installed package's ``sdgym.envs`` entry point (loaded
    once per process); a ValueError names an entry point that is not an EnvEntry or reuses an
    id."""
    from importlib.metadata import entry_points

    found: list[EnvEntry] = []
    taken = {entry.env_id for entry in ENVIRONMENTS}
    for point in sorted(entry_points(group=ENV_ENTRY_POINTS), key=lambda p: p.name):
        entry = point.load()
        if not isinstance(entry, EnvEntry):
            raise ValueError(f"entry point {point.name!r} ({point.value}) in group "
                             f"{ENV_ENTRY_POINTS!r} is a {type(entry).__name__}, not an EnvEntry")
        if entry.env_id in taken:
            raise ValueError(f"entry point {point.name!r} ({point.value}) registers "
                             f"{entry.env_id!r}, which is already registered")
        taken.add(entry.env_id)
        found.append(entry)
    return tuple(found)


def all_environments() -> tuple[EnvEntry, ...]:
    """The built-in environments, then those installed packages add (:data:`ENV_ENTRY_POINTS`)."""
    return ENVIRONMENTS + plugin_environments()


def entry_for(name: str) -> EnvEntry:
    """The entry of ``name``: the full id (``sdgym/SearchQA-v0``), the short one
    (``SearchQA-v0``) or the extra (``searchqa``). Raises ValueError naming the known ids."""
    for entry in all_environments():
        if name in (entry.env_id, entry.env_id.split("/")[-1], entry.extra):
            return entry
    known = ", ".join(e.env_id for e in all_environments())
    raise ValueError(f"unknown environment {name!r}; known: {known}")


@functools.cache
def env_class(env_id: str) -> type:
    """The class registered as ``env_id`` (imports its module; builds nothing). What an agent
    needs to know about the env is declared on it (:class:`sdgym.core.TextEnv`)."""
    from gymnasium.envs.registration import load_env_creator

    import sdgym  # noqa: F401  (registers the env ids)

    if env_id not in gym.registry:
        known = sorted(k for k in gym.registry if k.startswith("sdgym/"))
        raise ValueError(f"unknown environment {env_id!r}; registered: {known}")
    entry_point = gym.spec(env_id).entry_point
    return load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point


def implemented(entry: EnvEntry) -> bool:
    """Whether the env's module is part of this installation of sdgym."""
    module = entry.entry_point.split(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def register_envs() -> None:
    """Register every sdgym id, built-in and from installed packages, with Gymnasium
    (idempotent)."""
    for entry in all_environments():
        if entry.env_id not in gym.registry:
            gym.register(
                id=entry.env_id,
                entry_point=entry.entry_point,
                max_episode_steps=entry.max_episode_steps,
                # Gymnasium's passive checker keeps stale state after a reset that raised (a bad
                # split), and its next step() then raises TypeError; the contract tests run the
                # full gymnasium check_env on every env instead
                disable_env_checker=True,
            )
