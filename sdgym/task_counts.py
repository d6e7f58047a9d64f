"""Task counts per split for ``sdgym list``: counted once (which builds the engine), then cached.

Counting a split means making the env, which builds its engine (a JVM, an index, generated games):
seconds to tens of seconds. ``sdgym list`` therefore reads counts from ``$SDGYM_CACHE`` and counts
only when asked (``sdgym list --counts``), keyed by the env id, its ``gym.make`` kwargs, the
sdgym version and a hash of the env packages' source.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from sdgym.cache import atomic_write_text, cache_dir, source_digest

CACHE_FOLDER = "task-counts"


@lru_cache(maxsize=1)
def _envs_source_digest() -> str:
    """A hash of the env packages' source: an edit that changes a split (e.g. generated goals)
    invalidates the counts even within one version."""
    return source_digest(sorted((Path(__file__).parent / "envs").rglob("*.py")))


def _cache_file(env_id: str, kwargs: dict[str, Any]) -> Path:
    from sdgym import __version__

    key = json.dumps([__version__, _envs_source_digest(), env_id, sorted(kwargs.items())],
                     default=repr)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_dir(CACHE_FOLDER) / f"{env_id.replace('/', '_')}-{digest}.json"


def cached_task_counts(env_id: str, kwargs: dict[str, Any]) -> dict[str, int] | None:
    """The counts stored by :func:`count_tasks` for these settings, or ``None`` (never builds)."""
    path = _cache_file(env_id, kwargs)
    try:
        counts = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(counts, dict) or not all(isinstance(n, int) for n in counts.values()):
        return None
    return counts


def count_tasks(env_id: str, kwargs: dict[str, Any]) -> dict[str, int]:
    """Make the env, count the tasks of each split, cache and return ``{split: count}``."""
    import gymnasium as gym

    env = gym.make(env_id, **kwargs)
    try:
        core = env.unwrapped
        counts = {split: int(core.task_count(split)) for split in core.splits}
    finally:
        env.close()
    atomic_write_text(_cache_file(env_id, kwargs), json.dumps(counts))
    return counts


def format_counts(counts: dict[str, int]) -> str:
    """``{"train": 3, "test": 2}`` → ``"train 3, test 2"``."""
    return ", ".join(f"{split} {n}" for split, n in counts.items())
