"""The browser watchdog cleans up on SIGTERM as on its owner's end-of-file: an orphaned worker
ends its children with SIGTERM (:mod:`sdgym.process_lifetime`), and the watchdog must not go
without the browser. A ``sleep`` in its own session stands in for chromedriver's group."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from sdgym.envs.webshop.chromium import start_watchdog

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")


def _catches_sigterm(pid: int) -> bool:
    """Whether ``pid`` has its SIGTERM handler installed (``SigCgt`` in ``/proc``)."""
    with open(f"/proc/{pid}/status") as status:
        caught = next(line for line in status if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (signal.SIGTERM - 1) & 1)


@pytest.mark.parametrize("how", ["sigterm", "end-of-file"])
def test_watchdog_ends_the_group_and_removes_the_profile(tmp_path, how: str) -> None:
    profile = tmp_path / "profile"
    profile.mkdir()
    group = subprocess.Popen(["sleep", "600"], start_new_session=True)
    watchdog = start_watchdog(str(profile))
    try:
        assert watchdog.stdin is not None
        watchdog.stdin.write(f"group {group.pid}\n".encode())
        watchdog.stdin.flush()
        deadline = time.monotonic() + 30
        while not _catches_sigterm(watchdog.pid):
            assert time.monotonic() < deadline and watchdog.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)  # it reads the line right after
        if how == "sigterm":
            watchdog.send_signal(signal.SIGTERM)
        else:
            watchdog.stdin.close()
        assert watchdog.wait(timeout=10) == 0
        assert group.wait(timeout=10) == -signal.SIGTERM
        assert not profile.exists()
    finally:
        for process in (group, watchdog):
            if process.poll() is None:
                process.kill()
                process.wait()
