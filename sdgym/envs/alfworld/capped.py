"""Run a planner call in a forked child under a memory cap and a wall-clock safety net.

fast-downward's search (called through ``libdownward``) has no node or time limit that TextWorld
exposes, and a blind search on a large room can grow for minutes and gigabytes. :func:`run_capped`
runs a function in a ``fork()`` of the current process with ``RLIMIT_AS`` set to the child's
current address-space size plus ``PlanLimits.memory_bytes``: the search's memory grows with the
number of states it stores, so this budget acts as a cap on search nodes that does not depend on
the machine's speed. ``PlanLimits.timeout_s`` is only a safety net (a stuck child is killed). The
child's result, or the exception it raised, comes back as JSON through a pipe; the child is
always reaped.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ERROR_CHARS = 200
"""Longest exception text a failed child reports (entity names make each one differ)."""


class PlanningLimitExceeded(RuntimeError):
    """The capped call ran out of its memory budget or time, or its child process died."""


@dataclass(frozen=True)
class PlanLimits:
    """Budget of one capped planner call."""

    memory_bytes: int = 1 << 30
    """Address space the call may add to the process (1 GiB)."""
    timeout_s: float = 120.0
    """Wall-clock safety net in seconds."""


def _address_space_bytes() -> int:
    """Current virtual memory size of this process (``/proc/self/statm``)."""
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


def _child(function: Callable[[], Any], limits: PlanLimits, write_fd: int) -> None:
    """Body of the forked child: cap memory, run, send JSON, exit without cleanup handlers."""
    status = 1
    try:
        cap = _address_space_bytes() + limits.memory_bytes
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        _write_all(write_fd, json.dumps({"result": function()}).encode())
        status = 0
    except BaseException as error:  # noqa: BLE001 - any failure (MemoryError included) is reported
        status = 1
        with contextlib.suppress(BaseException):  # best effort: memory may be exhausted
            text = traceback.format_exception_only(error)[-1].strip()[:ERROR_CHARS]
            _write_all(write_fd, json.dumps({"error": text,
                                             "memory": isinstance(error, MemoryError)}).encode())
    finally:
        os._exit(status)


def _write_all(write_fd: int, payload: bytes) -> None:
    """Write all of ``payload`` to the pipe ``write_fd`` (``os.write`` may write part of it)."""
    view = memoryview(payload)
    while view:
        view = view[os.write(write_fd, view) :]


def _read_until(read_fd: int, deadline: float) -> bytes | None:
    """Everything written to ``read_fd`` until EOF, or ``None`` at the deadline."""
    chunks = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([read_fd], [], [], remaining)
        if not ready:
            return None
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def run_capped(function: Callable[[], Any], limits: PlanLimits | None = None) -> Any:
    """``function()`` (its result must be JSON-serialisable) run in a capped forked child.

    Raises:
        PlanningLimitExceeded: the child exceeded ``limits`` or failed.
    """
    limits = limits or PlanLimits()
    if limits.memory_bytes <= 0 or limits.timeout_s <= 0:
        raise ValueError(f"limits must be positive, got {limits}")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read_fd)
        _child(function, limits, write_fd)
    os.close(write_fd)
    payload: bytes | None = None
    try:
        payload = _read_until(read_fd, time.monotonic() + limits.timeout_s)
    finally:
        os.close(read_fd)
        if payload is None:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if payload is None:
        raise PlanningLimitExceeded(f"planner exceeded {limits.timeout_s:g} s")
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or not payload:
        raise PlanningLimitExceeded(_failure(payload, code, limits))
    return json.loads(payload)["result"]


def _failure(payload: bytes, code: int, limits: PlanLimits) -> str:
    """Why the child gave no result: its exception (out of memory: the cap), else how it ended.

    A child killed by a signal or failing in C code without a report may have run out of its
    memory budget too, so those messages name the cap as a possible cause."""
    cap = f"{limits.memory_bytes / 2**20:.0f} MiB"
    try:
        report = json.loads(payload)
        error, memory = str(report["error"]), bool(report.get("memory"))
    except (ValueError, KeyError, TypeError):
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"planner killed by {signal.Signals(-code).name} (over {cap}?)"
            return f"planner killed by signal {-code} (over {cap}?)"
        report_state = "an unreadable report" if payload else "no report"
        return f"planner ended with exit status {code} and {report_state} (over {cap}?)"
    if memory:
        return f"planner exceeded {cap} ({error})"
    return f"planner failed ({error})"
