"""Worker processes that end with the process that started them, even after its ``kill -9``.

A process whose parent is killed outright (SIGKILL, out of memory) is adopted by init and runs
on: before this module, a killed ``sdgym benchmark`` left its two worker processes (~0.7 GB each,
with their JVMs and browsers) running for good. A child that calls :func:`tie_to_parent` first
thing instead ends within about a second of its parent, two ways:

- on Linux, ``prctl(PR_SET_PDEATHSIG, SIGTERM)``: the kernel signals the child as its parent
  dies. The kernel means the parent *thread* that started the child, so the parent asks for it
  only when it starts children from its main thread (which lives as long as the process);
- everywhere, a daemon thread that polls ``os.getppid()`` every :data:`POLL_S` seconds: a new
  parent id means the parent is gone (also the fallback where the signal is not asked for).

Either way the child sends SIGTERM to its own children and exits (:func:`end_process_tree`; the
tied child also ends so on a plain SIGTERM, e.g. from ``ProcessPoolExecutor`` stopping a broken
pool). Children tied themselves pass it on; a JVM exits on SIGTERM; the browser watchdog cleans
up its browser on it. What the child launches without a tie still ends by its own pipe: the
ScienceWorld JVM (py4j's ``--die-on-broken-pipe``) and the browser watchdog exit when the pipe
from their owner closes, which any death of the owner does. The ``multiprocessing`` resource
tracker needs nothing: it exits when the last process holding its pipe (the parent and its
``spawn`` children) is gone.

Usage: the parent computes :func:`parent_tie` just before it starts children, in the thread that
starts them, and each child passes it to :func:`tie_to_parent` (a ``ProcessPoolExecutor``
initializer, or :func:`tied_async_worker` for Gymnasium's ``AsyncVectorEnv``).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import glob
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

POLL_S = 1.0
"""Seconds between two looks at the parent's process id."""

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class ParentTie(NamedTuple):
    """What a child needs to know of its parent (picklable: goes to ``spawn`` children)."""

    pid: int
    """The parent's process id, taken in the parent (the child may start after it died)."""
    death_signal: bool
    """Whether the child may ask the kernel for a signal when the parent dies: only when the
    parent starts it from its main thread (the signal follows the starting thread)."""


def parent_tie() -> ParentTie:
    """This process as the parent of the children the calling thread is about to start."""
    return ParentTie(os.getpid(), threading.current_thread() is threading.main_thread())


def _child_pids() -> list[int]:
    """Process ids of this process's children (``/proc`` on Linux; else the ``multiprocessing``
    ones, the only ones this module starts elsewhere)."""
    found: set[int] = set()
    for path in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        with contextlib.suppress(OSError, ValueError), open(path) as listing:
            found.update(int(pid) for pid in listing.read().split())
    if not found and not os.path.isdir("/proc"):
        import multiprocessing

        found.update(p.pid for p in multiprocessing.active_children() if p.pid)
    return sorted(found)


def end_process_tree(code: int = 128 + signal.SIGTERM) -> None:
    """Send SIGTERM to this process's children and exit at once with ``code``, running no
    cleanup: the parent is gone, and cleanup code may block on it (pipes, queues, locks)."""
    for pid in _child_pids():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    os._exit(code)


def _on_sigterm(signum: int, frame: Any) -> None:
    end_process_tree(128 + signum)


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(POLL_S)
    end_process_tree()


def _ask_death_signal() -> bool:
    """``prctl(PR_SET_PDEATHSIG, SIGTERM)``; whether the kernel took it (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def tie_to_parent(tie: ParentTie) -> None:
    """End this process and its children when the parent ``tie`` names dies (module
    docstring). Call it first thing in the child's main thread."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    if tie.death_signal:
        _ask_death_signal()
    if os.getppid() != tie.pid:  # died before the signal was asked for
        end_process_tree()
    threading.Thread(target=_watch_parent, args=(tie.pid,), name="sdgym-parent-watch",
                     daemon=True).start()


def _tied_async_worker(tie: ParentTie, *args: Any) -> None:
    from gymnasium.vector.async_vector_env import _async_worker

    tie_to_parent(tie)
    _async_worker(*args)


def tied_async_worker() -> Callable[..., None]:
    """A ``worker`` for ``gymnasium.vector.AsyncVectorEnv``: Gymnasium's own worker loop in a
    process tied to this one (call it in the thread that builds the vector env)."""
    return functools.partial(_tied_async_worker, parent_tie())
