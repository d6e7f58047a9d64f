"""Shared test set-up: a private cache dir, one CPU thread, and the envs available here."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from sdgym_test_params import AVAILABLE_IDS, FAST_KWARGS  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    if "SDGYM_CACHE" not in os.environ:
        os.environ["SDGYM_CACHE"] = str(tmp_path_factory.mktemp("sdgym-cache"))


ORPHAN_NAMES = ("java", "chrom", "raylet", "gcs_server", "ray::")
"""Process-name fragments of servers the tests start and must stop."""


def _close_shared_jvms() -> None:
    """Stop the process's shared ScienceWorld JVM (it otherwise lives until the process exits)."""
    try:
        from sdgym.envs.scienceworld.shared_jvm import close_shared_jvms
    except ImportError:  # no scienceworld extra
        return
    close_shared_jvms()


@pytest.fixture(scope="session", autouse=True)
def _no_orphan_processes():
    """After the whole session, no JVM, browser or Ray process started by the tests may still run."""
    yield
    import gc

    _close_shared_jvms()

    import psutil  # in the test extra; a missing one fails loudly here, not silently

    gc.collect()
    leftover = [
        child.name()
        for child in psutil.Process(os.getpid()).children(recursive=True)
        if child.is_running() and any(n in child.name().lower() for n in ORPHAN_NAMES)
    ]
    assert not leftover, f"processes left running after the tests: {leftover}"


@pytest.fixture(params=AVAILABLE_IDS)
def env_id(request: pytest.FixtureRequest) -> str:
    """Each registered sdgym id whose module and extra are installed."""
    return request.param


@pytest.fixture
def make_env(env_id: str):
    """Factory for the env under test with its fast kwargs; closes every env it made."""
    import gymnasium as gym

    made = []

    def factory(**overrides):
        env = gym.make(env_id, **{**FAST_KWARGS.get(env_id, {}), **overrides})
        made.append(env)
        return env

    yield factory
    for env in made:
        env.close()

