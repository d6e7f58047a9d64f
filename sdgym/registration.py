"""The four sdgym environment ids, registered as data (entry points are strings: cheap import)."""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym


@dataclass(frozen=True)
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
        "sdgym/ALFWorld-v0",
        "sdgym.envs.alfworld.env:ALFWorldEnv",
        50,
        "alfworld",
        ("textworld", "alfworld"),
        "household tasks on the ALFWorld/TextWorld PDDL engine",
        test_kwargs={"size": "small"},
    ),
    EnvEntry(
        "sdgym/ScienceWorld-v0",
        "sdgym.envs.scienceworld.env:ScienceWorldEnv",
        30,
        "scienceworld",
        ("scienceworld",),
        "elementary science experiments on the ScienceWorld simulator",
        test_kwargs={"task_names": ["chemistry-mix"]},
    ),
    EnvEntry(
        "sdgym/SearchQA-v0",
        "sdgym.envs.searchqa.env:SearchQAEnv",
        4,
        "searchqa",
        ("bm25s",),
        "Search-R1-style retrieval QA over a generated encyclopedia",
        test_kwargs={"size": "tiny"},
    ),
    EnvEntry(
        "sdgym/WebShop-v0",
        "sdgym.envs.webshop.env:WebShopEnv",
        15,
        "webshop",
        ("rapidfuzz", "bm25s"),
        "WebShop-style online shopping over a generated catalogue",
        test_kwargs={"size": "tiny"},
    ),
)


def entry_for(name: str) -> EnvEntry:
    """The entry of ``name``: the full id (``sdgym/SearchQA-v0``), the short one
    (``SearchQA-v0``) or the extra (``searchqa``). Raises ValueError naming the known ids."""
    for entry in ENVIRONMENTS:
        if name in (entry.env_id, entry.env_id.split("/")[1], entry.extra):
            return entry
    known = ", ".join(e.env_id for e in ENVIRONMENTS)
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
    """Register every sdgym id with Gymnasium (idempotent)."""
    for entry in ENVIRONMENTS:
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
