"""Headless Chromium under selenium, offline and leak-free (Debian's chromium + chromedriver).

:class:`Chromium` starts chromedriver from a fixed path (``Service(executable_path=...)``, so
selenium's driver manager is never run and nothing is downloaded), with the flags measured in
PLATFORM.md: headless, no sandbox/GPU/QUIC, no background networking, component updates or sync,
a fresh profile in a temp dir, and a host-resolver rule that makes every host except
``127.0.0.1`` unresolvable. :meth:`Chromium.quit` quits the driver, kills whatever is left of
chromedriver's process tree and removes the profile; a garbage-collected or forgotten instance
is cleaned up the same way (``weakref.finalize``, which also runs at interpreter exit).

A Python process killed outright (SIGKILL, or SIGTERM without a handler) runs none of that, so
chromedriver starts in a session of its own (the browser, renderers and crashpad join its
process group) watched by :mod:`~sdgym.envs.webshop.browser_watchdog`, a small process that
kills that group and removes the profile when its owner dies. The browser's XDG config and
cache directories are inside the profile, so nothing is written under ``~/.config/chromium``
or ``~/.cache/chromium``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import weakref
from pathlib import Path
from typing import Any

WATCHDOG_SCRIPT = Path(__file__).with_name("browser_watchdog.py")

CHROMIUM_FLAGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--disable-crash-reporter",
    "--disable-breakpad",
    "--window-size=1280,1024",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
)
"""Command-line flags of every browser started here (plus ``--user-data-dir``)."""

_DRIVER_CANDIDATES = ("/usr/bin/chromedriver",)
_BROWSER_CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium")


def find_chromedriver() -> str | None:
    """Debian's chromedriver (``/usr/bin/chromedriver``), else ``chromedriver`` on PATH."""
    for path in _DRIVER_CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("chromedriver")


def find_chromium() -> str | None:
    """The Chromium binary: Debian's (launcher-free path first), else one on PATH."""
    for path in _BROWSER_CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def browser_unavailable_reason() -> str | None:
    """Why browser mode cannot run here, or ``None`` if it can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install 'sdgym[browser]')"
    if find_chromedriver() is None or find_chromium() is None:
        return "chromium/chromedriver not found (apt-get install -y chromium chromium-driver)"
    return None


class Chromium:
    """A headless Chromium driven by selenium; see the module docstring.

    Args:
        page_load_timeout: seconds a navigation may take before selenium raises.
        chromium_path, chromedriver_path: override the binaries found by :func:`find_chromium`
            and :func:`find_chromedriver`.

    Attributes:
        driver: the ``selenium.webdriver.Chrome`` instance.
        profile_dir: the temp dir holding the fresh user profile.
    """

    def __init__(
        self,
        page_load_timeout: float = 30.0,
        chromium_path: str | None = None,
        chromedriver_path: str | None = None,
    ) -> None:
        from selenium import webdriver

        reason = browser_unavailable_reason()
        if reason is not None and (chromium_path is None or chromedriver_path is None):
            raise RuntimeError(f"browser mode is unavailable: {reason}")
        options = webdriver.ChromeOptions()
        options.binary_location = chromium_path or find_chromium() or ""
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        self.profile_dir = tempfile.mkdtemp(prefix="sdgym-chromium-")
        options.add_argument(f"--user-data-dir={self.profile_dir}")
        self._watchdog = start_watchdog(self.profile_dir)
        # A driver path in Service makes selenium skip Selenium Manager (no download, no SE_OFFLINE
        # needed): DriverFinder only runs the manager when neither path is given.
        service = session_service(
            self._watchdog,
            executable_path=chromedriver_path or find_chromedriver() or "",
            env=browser_environment(self.profile_dir),
        )
        try:
            self.driver: Any = webdriver.Chrome(service=service, options=options)
        except BaseException:
            with contextlib.suppress(Exception):
                service.stop()
            _shutdown(None, self.profile_dir, self._watchdog)
            raise
        self.driver.set_page_load_timeout(page_load_timeout)
        self._finalizer = weakref.finalize(
            self, _shutdown, self.driver, self.profile_dir, self._watchdog
        )

    @property
    def pids(self) -> list[int]:
        """Process ids of chromedriver and every process under it (needs psutil; else [])."""
        return [process.pid for process in _process_tree(self.driver)]

    def quit(self) -> None:
        """Quit the browser and driver, kill leftovers, remove the profile (idempotent)."""
        self._finalizer()


def browser_environment(profile_dir: str) -> dict[str, str]:
    """The driver's (and so the browser's) environment: XDG dirs inside the profile."""
    return {
        **os.environ,
        "XDG_CONFIG_HOME": os.path.join(profile_dir, "xdg-config"),
        "XDG_CACHE_HOME": os.path.join(profile_dir, "xdg-cache"),
    }


def start_watchdog(profile_dir: str) -> subprocess.Popen:
    """The :mod:`~sdgym.envs.webshop.browser_watchdog` of ``profile_dir`` (own session, stdin a
    pipe only this process writes)."""
    return subprocess.Popen(
        [sys.executable, "-I", str(WATCHDOG_SCRIPT), profile_dir],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def _tell(watchdog: subprocess.Popen, line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        assert watchdog.stdin is not None
        watchdog.stdin.write(line.encode() + b"\n")
        watchdog.stdin.flush()


@functools.cache
def _session_service_class() -> type:
    from selenium.webdriver.chrome.service import Service

    class SessionService(Service):
        """chromedriver in a new session; its process group is reported to the watchdog as soon
        as it is spawned."""

        def __init__(self, watchdog: subprocess.Popen, **kwargs: Any) -> None:
            super().__init__(popen_kw={"start_new_session": True}, **kwargs)
            self._watchdog = watchdog

        def _start_process(self, path: str) -> None:
            super()._start_process(path)
            _tell(self._watchdog, f"group {self.process.pid}")

    return SessionService


def session_service(watchdog: subprocess.Popen, **kwargs: Any) -> Any:
    """A selenium chromedriver ``Service`` (``kwargs``) that starts chromedriver in a new session
    and tells ``watchdog`` its process group."""
    return _session_service_class()(watchdog, **kwargs)


def _process_tree(driver: Any) -> list[Any]:
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is in the test extra
        return []
    process = getattr(getattr(driver, "service", None), "process", None)
    if process is None:
        return []
    try:
        root = psutil.Process(process.pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _running(process: Any) -> bool:
    """Whether ``process`` still runs (a zombie waiting for its reaper does not)."""
    import psutil

    try:
        return bool(process.is_running() and process.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def _shutdown(driver: Any, profile_dir: str, watchdog: subprocess.Popen | None = None) -> None:
    """Quit ``driver``, then terminate (and if need be kill) what is left of its process tree;
    then dismiss the watchdog."""
    processes = _process_tree(driver) if driver is not None else []
    if driver is not None:
        with contextlib.suppress(Exception):
            driver.quit()
    if processes:
        import psutil

        alive = [process for process in processes if _running(process)]
        for process in alive:
            with contextlib.suppress(psutil.Error):
                process.terminate()
        _, alive = psutil.wait_procs(alive, timeout=3)
        for process in filter(_running, alive):
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(alive, timeout=3)
    shutil.rmtree(profile_dir, ignore_errors=True)
    if watchdog is not None:
        _tell(watchdog, "done")
        with contextlib.suppress(OSError, ValueError):
            assert watchdog.stdin is not None
            watchdog.stdin.close()
        try:
            watchdog.wait(timeout=5)
        except subprocess.TimeoutExpired:
            watchdog.kill()
            watchdog.wait()
