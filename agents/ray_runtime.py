"""Connecting to Ray: an existing cluster by address, or a local instance on this machine.

Ray is an optional extra (``pip install sdgym[ray]``) and is imported only here and in the Ray
modules that call :func:`ensure_ray`, never when ``sdgym``, ``agents`` or ``baselines`` are
imported.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any


def import_ray() -> Any:
    """The ``ray`` module, or a clear error naming the extra to install."""
    try:
        import ray
    except ImportError as error:  # pragma: no cover - depends on the installed extras
        raise ImportError("the Ray backend needs Ray: pip install 'sdgym[ray]'") from error
    return ray


_state = {"users": 0, "started": False}
"""How many open sdgym objects use Ray, and whether sdgym started it in this process."""


def acquire_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Connect this process to Ray (if it is not already) and count one more user.

    With ``address`` (``"auto"``, ``"ray://host:10001"`` or ``"host:6379"``) it joins that
    cluster; otherwise it starts a local instance with ``num_cpus`` CPUs (default: this
    machine's), without the dashboard and without forwarding worker logs. A connection made by
    the caller (their own ``ray.init``) is used as it is and never shut down here.
    """
    ray = import_ray()
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=num_cpus or os.cpu_count() or 1, include_dashboard=False,
                     log_to_driver=False)
        _state["started"] = True
    _state["users"] += 1


def release_ray() -> None:
    """Count one user less; shut Ray down when the last one leaves and sdgym started it."""
    _state["users"] = max(_state["users"] - 1, 0)
    if _state["users"] == 0 and _state["started"]:
        _state["started"] = False
        import_ray().shutdown()


@contextlib.contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None) -> Iterator[Any]:
    """``with ray_session(num_cpus=2) as ray:`` — :func:`acquire_ray` on entry, :func:`release_ray`
    on exit (so a Ray instance started here is shut down, also when the body raises)."""
    acquire_ray(address, num_cpus)
    try:
        yield import_ray()
    finally:
        release_ray()
