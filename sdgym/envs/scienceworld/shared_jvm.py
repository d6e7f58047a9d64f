"""One ScienceWorld JVM per process, shared by every env that asks for it (``jvm="shared"``).

A JVM costs ~1.8 s to start, ~470 MB resident, and its first loads and steps run 2-4x slower
than once its JIT is warm. A rollout of 16 sub-envs with one JVM each therefore held 7.5 GB and
paid 16 cold starts on every validation and test panel. A JVM can instead host many independent
simulator sessions (:meth:`~sdgym.envs.scienceworld.jvm.SimulatorJVM.new_session`): sessions
stepped in turn play exactly as separate JVMs do (tested; each keeps its own state of the JVM's
one random-number generator, :class:`~sdgym.envs.scienceworld.jvm.GlobalRandom`), so every env
of a process borrows a session in one JVM that stays warm from panel to panel.

Lifetime: the shared JVM starts on the first request and lives until the process exits (the
JVM's own finalizer; ``--die-on-broken-pipe`` ends it even after ``kill -9`` of this process) or
:func:`close_shared_jvms`. Closing an env ends its session, not the JVM. A JVM that dies or
hangs is dropped by the first env that notices (:func:`forget`); every env then replays its
episode on the next shared JVM, as after a crash of its own JVM. Calls into a shared JVM are
serialised by :attr:`SharedJVM.lock` (sessions share one JVM, whose thread safety upstream does
not promise).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from sdgym.envs.scienceworld.jvm import SimulatorJVM

SHARED_HEAP = "-Xmx1g"
"""Heap cap of a shared JVM when no ``java_options`` are given: room for the sessions of two
16-env rollouts alive at once (measured in docs/envs/scienceworld.md)."""


@dataclass
class SharedJVM:
    """A JVM shared by the envs of this process, and the lock that serialises calls into it."""

    jvm: SimulatorJVM
    lock: threading.RLock = field(default_factory=threading.RLock)


_registry: dict[tuple, SharedJVM] = {}
_registry_lock = threading.Lock()


def _forget_after_fork() -> None:
    """In a forked child: the parent's shared JVMs are not this process's (their finalizers
    already do nothing here, :func:`~sdgym.envs.scienceworld.jvm._stop_process`); start afresh."""
    global _registry_lock
    _registry_lock = threading.Lock()
    _registry.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def _key(java_path: str | None, java_options: Sequence[str] | None, call_timeout: float) -> tuple:
    return (java_path, None if java_options is None else tuple(java_options), float(call_timeout))


def shared_jvm(java_path: str | None, java_options: Sequence[str] | None,
               call_timeout: float) -> SharedJVM:
    """The live shared JVM for these settings, started if there is none (or it has exited)."""
    key = _key(java_path, java_options, call_timeout)
    with _registry_lock:
        shared = _registry.get(key)
        if shared is None or not shared.jvm.alive():
            options = (SHARED_HEAP, "-XX:+UseSerialGC") if java_options is None else java_options
            shared = SharedJVM(SimulatorJVM(java_path, options, call_timeout))
            _registry[key] = shared
        return shared


def forget(shared: SharedJVM) -> None:
    """Drop ``shared`` (dead or hung, already killed) so the next request starts a new JVM."""
    with _registry_lock:
        for key, value in list(_registry.items()):
            if value is shared:
                del _registry[key]
    shared.jvm.close()


def close_shared_jvms() -> int:
    """Stop every shared JVM of this process (envs still open start a new one when stepped);
    return how many were stopped."""
    with _registry_lock:
        stopped = list(_registry.values())
        _registry.clear()
    for shared in stopped:
        shared.jvm.close()
    return len(stopped)


def shared_jvm_pids() -> list[int]:
    """Process ids of this process's shared JVMs that are running."""
    with _registry_lock:
        return [shared.jvm.pid for shared in _registry.values() if shared.jvm.alive()]
