"""Serving a WSGI app on the loopback interface: in a background thread, or until Ctrl-C.

Both bind ``127.0.0.1`` by default; port ``0`` picks a free ephemeral port. Another loopback
address (``localhost``, ``::1``, ``127.x.y.z``) may be asked for; any other host -- an interface
address, ``0.0.0.0`` (all interfaces) -- is refused with a :class:`ValueError` unless the caller
passes ``allow_remote=True`` (``sdgym serve webshop --host H --allow-remote``), since the site
then becomes reachable from other machines.

Example:
    >>> from flask import Flask
    >>> with BackgroundServer(Flask("demo")) as server:
    ...     server.url.startswith("http://127.0.0.1:")
    True
"""

from __future__ import annotations

import ipaddress
import signal
import threading
from types import TracebackType
from typing import Any

from werkzeug.serving import WSGIRequestHandler, make_server

HOST = "127.0.0.1"
"""The address the site listens on by default."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback IP address (``127.0.0.0/8``, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost: may resolve anywhere
        return False


def check_host(host: str, allow_remote: bool = False) -> str:
    """``host`` if serving on it is allowed: a loopback address, or anything with
    ``allow_remote``.

    Raises:
        ValueError: ``host`` is not a loopback address and ``allow_remote`` is false.
    """
    if not isinstance(host, str) or not host:
        raise ValueError(f"host must be a non-empty string, got {host!r}")
    if is_loopback(host) or allow_remote:
        return host
    raise ValueError(
        f"refusing to serve on {host!r}: it is not a loopback address, so other machines could "
        "reach the site; pass allow_remote=True (sdgym serve --allow-remote) to do it anyway"
    )


def _url(host: str, port: int) -> str:
    bare = host.strip("[]")
    return f"http://[{bare}]:{port}" if ":" in bare else f"http://{bare}:{port}"


class QuietRequestHandler(WSGIRequestHandler):
    """A request handler that does not log every request to stderr."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Do not log successful requests (errors are still logged)."""


class BackgroundServer:
    """A threaded werkzeug server for ``app`` on ``host:port``, running in a daemon thread.

    ``host`` defaults to ``127.0.0.1``; a non-loopback one needs ``allow_remote=True`` (see
    :func:`check_host`). Starts on construction; :meth:`stop` (or leaving the ``with`` block)
    shuts it down, joins the thread and closes the socket. ``stop`` is idempotent.
    """

    def __init__(
        self, app: Any, port: int = 0, host: str = HOST, allow_remote: bool = False
    ) -> None:
        check_host(host, allow_remote)
        self._server = make_server(
            host.strip("[]"), port, app, threaded=True, request_handler=QuietRequestHandler
        )
        self.host, self.port = host, int(self._server.server_port)
        self.url = _url(host, self.port)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},  # how soon stop() is noticed
            name=f"webshop-site-{self.port}", daemon=True
        )
        self._thread.start()
        self._stopped = False

    @property
    def running(self) -> bool:
        """Whether the serving thread is alive."""
        return self._thread.is_alive()

    def stop(self) -> None:
        """Shut the server down and release its port (safe to call twice)."""
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._thread.join(timeout=10)
        self._server.server_close()

    def __enter__(self) -> BackgroundServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def check_port(port: int) -> None:
    """Raise ValueError unless ``port`` is a TCP port number (0 = any free one)."""
    if not 0 <= int(port) <= 65535:
        raise ValueError(f"port {port} is not a TCP port (use 0-65535; 0 picks a free one)")


def serve_until_interrupted(
    app: Any,
    port: int = 0,
    announce: Any = print,
    host: str = HOST,
    allow_remote: bool = False,
) -> None:
    """Serve ``app`` on ``host:port`` in this thread until Ctrl-C; ``announce(url)`` first.

    ``host`` defaults to ``127.0.0.1``; a non-loopback one needs ``allow_remote=True``.
    """
    check_host(host, allow_remote)
    check_port(port)
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C must stop the server even when the launcher left SIGINT ignored
        signal.signal(signal.SIGINT, signal.default_int_handler)
    server = make_server(host.strip("[]"), port, app, threaded=True)
    server.daemon_threads = True  # Ctrl-C must not wait for open (keep-alive) connections
    server.block_on_close = False
    announce(f"{_url(host, server.server_port)}/")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
