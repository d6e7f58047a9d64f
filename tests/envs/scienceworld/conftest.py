"""Fixtures for the ScienceWorld tests: one JVM per module, and no Java left after the session."""

from __future__ import annotations

import os
from collections.abc import Iterator

import gymnasium as gym
import pytest

pytest.importorskip("scienceworld")

import sdgym  # noqa: E402,F401  (registers the ids)
from sdgym.envs.scienceworld.jvm import find_java  # noqa: E402
from sdgym.envs.scienceworld.shared_jvm import close_shared_jvms  # noqa: E402


def java_children() -> list[int]:
    """Pids of java processes that are descendants of this test process."""
    import psutil

    return [
        child.pid
        for child in psutil.Process(os.getpid()).children(recursive=True)
        if child.is_running() and "java" in child.name().lower()
    ]


@pytest.fixture(scope="session", autouse=True)
def _no_orphan_java() -> Iterator[None]:
    """Fail the session if any java process started by the tests outlives it."""
    try:
        find_java()
    except FileNotFoundError:
        pytest.skip("no Java runtime for ScienceWorld")
    before = set(java_children())
    yield
    import gc

    close_shared_jvms()  # the process's shared JVM lives until exit otherwise

    gc.collect()
    leftover = set(java_children()) - before
    assert not leftover, f"java processes left running: {sorted(leftover)}"


@pytest.fixture(scope="module")
def sw_env() -> Iterator[gym.Env]:
    """One ``gym.make("sdgym/ScienceWorld-v0")`` per module (long step limit for gold replays)."""
    env = gym.make("sdgym/ScienceWorld-v0", max_episode_steps=1000)
    yield env
    env.close()
