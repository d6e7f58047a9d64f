"""Serving a WSGI app on the loopback interface: in a background thread, or until Ctrl-C.

Both bind ``127.0.0.1`` only (never all interfaces); port ``0`` picks a free ephemeral port.

Example:
    >>> from flask import Flask
    >>> with BackgroundServer(Flask("demo")) as server:
    ...     server.url.startswith("http://127.0.0.1:")
    True
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

from werkzeug.serving import WSGIRequestHandler, make_server

HOST = "127.0.0.1"
"""The only address the site listens on."""


class QuietRequestHandler(WSGIRequestHandler):
    """A request handler that does not log every request to stderr."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Do not log successful requests (errors are still logged)."""


class BackgroundServer:
    """A threaded werkzeug server for ``app`` on ``127.0.0.1:port``, running in a daemon thread.

    Starts on construction; :meth:`stop` (or leaving the ``with`` block) shuts it down, joins the
    thread and closes the socket. ``stop`` is idempotent.
    """

    def __init__(self, app: Any, port: int = 0) -> None:
        self._server = make_server(
            HOST, port, app, threaded=True, request_handler=QuietRequestHandler
        )
        self.host, self.port = HOST, int(self._server.server_port)
        self.url = f"http://{self.host}:{self.port}"
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


def serve_until_interrupted(app: Any, port: int = 0, announce: Any = print) -> None:
    """Serve ``app`` on ``127.0.0.1:port`` in this thread until Ctrl-C; ``announce(url)`` first."""
    server = make_server(HOST, port, app, threaded=True)
    announce(f"http://{HOST}:{server.server_port}/")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
