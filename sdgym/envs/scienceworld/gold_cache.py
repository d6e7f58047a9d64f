"""Upstream gold action sequences and expert plans, cached in this process and on disk.

Generating a gold sequence (``load(..., generateGoldPath=True)``) costs 0.1-2 s per (task,
variation, simplifications), 10-16 s on the Mendelian genetics tasks, against ~0.1 s for a plain
load. The gold agent is deterministic on a JVM with constant identity hashes
(:data:`~sdgym.envs.scienceworld.jvm.DETERMINISM_OPTIONS`), so a sequence is computed once per
machine: kept in a process-wide LRU (every env of the process, e.g. the group of a rollout that
plays one task, reuses it) and in ``$SDGYM_CACHE/scienceworld/gold/<jar digest>/``, keyed by the
simulator jar's SHA-256 (a new ScienceWorld release is a new folder). Sequences from a JVM that
runs without those options are kept in the process only.

Expert plans (a gold sequence in the valid-action list's words,
:func:`~sdgym.envs.scienceworld.plan_words.list_form_plan`, several seconds to verify) are kept the
same way under ``$SDGYM_CACHE/scienceworld/plans-v<PLAN_FORMAT>/<jar digest>/``, keyed by the
task, variation, simplifications and the SHA-256 of the sequence they rewrite: a new rewrite
algorithm (a new :data:`~sdgym.envs.scienceworld.plan_words.PLAN_FORMAT`) or a new gold sequence is
a new entry, never a misread old one.
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
from typing import Any

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


def _read_json(path: Path, what: str) -> Any:
    """The JSON in ``path``; ``None`` if it is absent or unreadable (a warning naming ``what``)."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        log.warning("%s cache entry %s is unreadable (%s); recomputing it", what, path, error)
        return None


def _read(key: GoldKey) -> list[str] | None:
    path = _entry(key)
    record = _read_json(path, "gold-sequence")
    if record is None:
        return None
    task, variation, simplifications, _ = key
    gold = record.get("gold") if isinstance(record, dict) else None
    if not isinstance(record, dict) or (record.get("task"), record.get("variation"), record.get("simplifications")) != (
        task, variation, simplifications
    ) or not isinstance(gold, list) or not all(isinstance(a, str) for a in gold):
        log.warning("gold-sequence cache entry %s is not the one for %s/%s; recomputing it",
                    path, task, variation)
        return None
    return gold


def cached_gold(key: GoldKey) -> list[str] | None:
    """The gold sequence for ``key`` from memory or disk, or ``None`` if it must be computed."""
    sequence = _recall(_memory, key)
    if sequence is not None:
        return list(sequence)
    if not key[3]:
        return None
    sequence = _read(key)
    if sequence is not None:
        _keep(_memory, key, list(sequence))
    return sequence


def remember_gold(key: GoldKey, sequence: list[str]) -> None:
    """Keep a freshly computed sequence (on disk too when the JVM was deterministic; a full
    disk only costs the disk copy)."""
    _keep(_memory, key, list(sequence))
    if key[3]:
        task, variation, simplifications, _ = key
        record = {"task": task, "variation": variation, "simplifications": simplifications,
                  "gold": list(sequence)}
        try:
            atomic_write_text(_entry(key), json.dumps(record))
        except DiskFullError as error:
            log.warning("%s; the gold sequence is kept in memory only", error)


def _recall(store: OrderedDict[Any, Any], key: Any) -> Any:
    """``store[key]`` (``None`` if absent), now the most recently used."""
    with _lock:
        value = store.get(key)
        if value is not None:
            store.move_to_end(key)
        return value


def _keep(store: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    """Put ``value`` in ``store``, dropping the least recently used beyond
    :data:`PROCESS_CACHE_SIZE`."""
    with _lock:
        store[key] = value
        store.move_to_end(key)
        while len(store) > PROCESS_CACHE_SIZE:
            store.popitem(last=False)


def clear_memory() -> None:
    """Forget the process's sequences and plans (the disk cache stays)."""
    with _lock:
        _memory.clear()
        _plans.clear()


def memory_keys() -> list[GoldKey]:
    """Keys of the sequences this process holds, least recently used first."""
    with _lock:
        return list(_memory)


PlanKey = tuple[str, int, str, bool, str, int]
"""(task name, variation, simplifications, JVM deterministic, SHA-256 of the rewritten gold
sequence, plan format)."""

_plans: OrderedDict[PlanKey, dict[str, Any]] = OrderedDict()


def plan_key(task: str, variation: int, simplifications: str, deterministic: bool,
             gold: list[str], plan_format: int) -> PlanKey:
    """The cache key of the expert plan that rewrites ``gold``."""
    digest = hashlib.sha256("\n".join(gold).encode()).hexdigest()
    return (task, variation, simplifications, deterministic, digest, plan_format)


def _plan_entry(key: PlanKey) -> Path:
    task, variation, simplifications, _, digest, plan_format = key
    name = hashlib.sha256(f"{task}\n{variation}\n{simplifications}\n{digest}".encode()).hexdigest()
    return cache_dir("scienceworld", f"plans-v{plan_format}", _jar_digest()) / f"{name[:24]}.json"


def cached_plan(key: PlanKey) -> dict[str, Any] | None:
    """The plan record for ``key`` (``{"plan": [...], "aliases": [...], ...}``) from memory or
    disk, or ``None`` if it must be computed."""
    record = _recall(_plans, key)
    if record is not None:
        return dict(record)
    if not key[3]:
        return None
    path = _plan_entry(key)
    record = _read_json(path, "expert-plan")
    if record is None:
        return None
    task, variation, simplifications, _, digest, _ = key
    if not (isinstance(record, dict) and (record.get("task"), record.get("variation"),
            record.get("simplifications"), record.get("gold_sha256")) == (
            task, variation, simplifications, digest)
            and _strings(record.get("plan")) and isinstance(record.get("aliases"), list)
            and len(record["aliases"]) == len(record["plan"])):
        log.warning("expert-plan cache entry %s is not the one for %s/%s; recomputing it",
                    path, task, variation)
        return None
    _keep(_plans, key, dict(record))
    return record


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def remember_plan(key: PlanKey, record: dict[str, Any]) -> None:
    """Keep a freshly computed plan record (on disk too when the JVM was deterministic)."""
    task, variation, simplifications, _, digest, _ = key
    record = {"task": task, "variation": variation, "simplifications": simplifications,
              "gold_sha256": digest, **record}
    _keep(_plans, key, dict(record))
    if key[3]:
        try:
            atomic_write_text(_plan_entry(key), json.dumps(record))
        except DiskFullError as error:
            log.warning("%s; the expert plan is kept in memory only", error)

