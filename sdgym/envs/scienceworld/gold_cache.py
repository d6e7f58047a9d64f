"""Upstream gold action sequences, cached in this process and on disk.

Generating a gold sequence (``load(..., generateGoldPath=True)``) costs 0.1-2 s per (task,
variation, simplifications), 10-16 s on the Mendelian genetics tasks, against ~0.1 s for a plain
load. The gold agent is deterministic on a JVM with constant identity hashes
(:data:`~sdgym.envs.scienceworld.jvm.DETERMINISM_OPTIONS`), so a sequence is computed once per
machine: kept in a process-wide LRU (every env of the process, e.g. the group of a rollout that
plays one task, reuses it) and in ``$SDGYM_CACHE/scienceworld/gold/<jar digest>/``, keyed by the
simulator jar's SHA-256 (a new ScienceWorld release is a new folder). Sequences from a JVM that
runs without those options are kept in the process only.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import threading
from collections import OrderedDict
from pathlib import Path

from sdgym.cache import DiskFullError, atomic_write_text, cache_dir, sha256_file

log = logging.getLogger(__name__)

PROCESS_CACHE_SIZE = 1024
"""Gold sequences kept in memory per process (least recently used dropped first)."""

GoldKey = tuple[str, int, str, bool]
"""(task name, variation, simplifications string, JVM deterministic)."""

_memory: OrderedDict[GoldKey, list[str]] = OrderedDict()
_lock = threading.Lock()


def _new_lock_after_fork() -> None:
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_after_fork)


@functools.cache
def _jar_digest() -> str:
    from scienceworld.constants import JAR_PATH

    return sha256_file(Path(JAR_PATH))[:16]


def _entry(key: GoldKey) -> Path:
    task, variation, simplifications, _ = key
    name = hashlib.sha256(f"{task}\n{variation}\n{simplifications}".encode()).hexdigest()[:24]
    return cache_dir("scienceworld", "gold", _jar_digest()) / f"{name}.json"


def _read(key: GoldKey) -> list[str] | None:
    path = _entry(key)
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        log.warning("gold-sequence cache entry %s is unreadable (%s); recomputing it", path, error)
        return None
    task, variation, simplifications, _ = key
    gold = record.get("gold") if isinstance(record, dict) else None
    if (record.get("task"), record.get("variation"), record.get("simplifications")) != (
        task, variation, simplifications
    ) or not isinstance(gold, list) or not all(isinstance(a, str) for a in gold):
        log.warning("gold-sequence cache entry %s is not the one for %s/%s; recomputing it",
                    path, task, variation)
        return None
    return gold


def cached_gold(key: GoldKey) -> list[str] | None:
    """The gold sequence for ``key`` from memory or disk, or ``None`` if it must be computed."""
    with _lock:
        sequence = _memory.get(key)
        if sequence is not None:
            _memory.move_to_end(key)
            return list(sequence)
    if not key[3]:
        return None
    sequence = _read(key)
    if sequence is not None:
        _remember_in_memory(key, sequence)
    return sequence


def remember_gold(key: GoldKey, sequence: list[str]) -> None:
    """Keep a freshly computed sequence (on disk too when the JVM was deterministic; a full
    disk only costs the disk copy)."""
    _remember_in_memory(key, sequence)
    if key[3]:
        task, variation, simplifications, _ = key
        record = {"task": task, "variation": variation, "simplifications": simplifications,
                  "gold": list(sequence)}
        try:
            atomic_write_text(_entry(key), json.dumps(record))
        except DiskFullError as error:
            log.warning("%s; the gold sequence is kept in memory only", error)


def _remember_in_memory(key: GoldKey, sequence: list[str]) -> None:
    with _lock:
        _memory[key] = list(sequence)
        _memory.move_to_end(key)
        while len(_memory) > PROCESS_CACHE_SIZE:
            _memory.popitem(last=False)


def clear_memory() -> None:
    """Forget the process's sequences (the disk cache stays)."""
    with _lock:
        _memory.clear()


def memory_keys() -> list[GoldKey]:
    """Keys of the sequences this process holds, least recently used first."""
    with _lock:
        return list(_memory)
