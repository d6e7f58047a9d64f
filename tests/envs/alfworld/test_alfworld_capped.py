"""The capped planner call: results come back, memory and time caps end the child, nothing leaks."""

from __future__ import annotations

import os
import signal
import time

import pytest

from sdgym.envs.alfworld.capped import PlanLimits, PlanningLimitExceeded, run_capped


def _children() -> list[int]:
    path = f"/proc/{os.getpid()}/task/{os.getpid()}/children"
    with open(path) as handle:
        return [int(pid) for pid in handle.read().split()]


def test_result_comes_back_from_the_child() -> None:
    assert run_capped(lambda: ["go to shelf 1", {"n": os.getpid()}])[0] == "go to shelf 1"
    assert run_capped(lambda: os.getpid()) != os.getpid()


def test_memory_cap_ends_the_child() -> None:
    def hog() -> int:
        return len(bytearray(512 << 20))

    with pytest.raises(PlanningLimitExceeded, match=r"^planner exceeded 64 MiB \(MemoryError"):
        run_capped(hog, PlanLimits(memory_bytes=64 << 20))
    assert run_capped(hog, PlanLimits(memory_bytes=1 << 30)) == 512 << 20


def test_timeout_kills_and_reaps_the_child() -> None:
    before = set(_children())  # other tests' long-lived helpers (JVMs, servers) may be alive
    began = time.monotonic()
    with pytest.raises(PlanningLimitExceeded, match="0.5 s"):
        run_capped(lambda: time.sleep(60), PlanLimits(timeout_s=0.5))
    assert time.monotonic() - began < 30
    assert set(_children()) <= before


def test_exceptions_in_the_child_and_bad_limits() -> None:
    before = set(_children())
    with pytest.raises(PlanningLimitExceeded,
                       match=r"^planner failed \(ZeroDivisionError: division by zero\)$"):
        run_capped(lambda: 1 / 0)
    with pytest.raises(ValueError, match="positive"):
        run_capped(lambda: 1, PlanLimits(memory_bytes=0))
    assert set(_children()) <= before


def test_a_child_that_dies_without_a_report_says_how_it_ended() -> None:
    before = set(_children())
    with pytest.raises(PlanningLimitExceeded, match=r"killed by SIGKILL \(over 1024 MiB\?\)"):
        run_capped(lambda: os.kill(os.getpid(), signal.SIGKILL))
    with pytest.raises(PlanningLimitExceeded, match=r"exit status 3 and no report"):
        run_capped(lambda: os._exit(3))

    assert set(_children()) <= before


def test_a_long_exception_text_is_cut() -> None:
    with pytest.raises(PlanningLimitExceeded) as raised:
        run_capped(lambda: (_ for _ in ()).throw(ValueError("x" * 10_000)))
    assert len(str(raised.value)) < 300
