"""Watchdog of one headless Chromium: cleans up when the Python process that owns it dies.

Run as a script by path (``python -I browser_watchdog.py PROFILE_DIR``; it imports nothing from
sdgym) in its own session, with a pipe on stdin whose write end only the owner holds. The owner
writes ``"group <pgid>\\n"`` once chromedriver runs (chromedriver is started in a new session, so
the browser, its renderers and crashpad share its process group) and ``"done\\n"`` after a clean
``quit()``. When stdin reaches end-of-file without ``done`` -- the owner was killed (SIGKILL,
SIGTERM) or exited without quitting -- the watchdog sends SIGTERM, then SIGKILL, to that process
group and removes the profile directory. A SIGTERM to the watchdog itself does the same at once
(an orphaned owner ends its children so, :mod:`sdgym.process_lifetime`): the watchdog never
exits on one without taking the browser with it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time

GRACE_S = 2.0
"""Seconds between SIGTERM and SIGKILL of the browser's process group."""


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - only other users' processes
        return True
    return True


def kill_group(pgid: int, grace_s: float = GRACE_S) -> None:
    """SIGTERM the process group, wait up to ``grace_s``, then SIGKILL what is left."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and _group_alive(pgid):
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


class _Terminated(Exception):
    """SIGTERM arrived: clean up as on end-of-file."""


def _on_sigterm(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one clean-up; a second SIGTERM waits for it
    raise _Terminated


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C to the owner's terminal is the owner's
    signal.signal(signal.SIGTERM, _on_sigterm)
    profile_dir = argv[1]
    pgid = None
    clean = False
    with contextlib.suppress(_Terminated):
        for line in sys.stdin:
            word, _, value = line.strip().partition(" ")
            if word == "group" and value.isdigit():
                pgid = int(value)
            elif word == "done":
                clean = True
                break
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # from here on nothing may cut the clean-up short
    if not clean:
        if pgid is not None and pgid > 1:
            kill_group(pgid)
        shutil.rmtree(profile_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
