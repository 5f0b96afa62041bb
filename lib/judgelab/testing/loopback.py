"""The lifecycle every loopback test server shares: a free port on 127.0.0.1, one thread.

A subclass provides `handler_class()` (the request handler bound to it); `start`, `stop` and
the context manager come from here, so servers differ only in what a request sees.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self


class LoopbackServer:
    """Serve on 127.0.0.1 at a free port in a daemon thread; a context manager."""

    def __init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        """Return the request handler class bound to this server (subclasses provide it)."""
        raise NotImplementedError

    @property
    def port(self) -> int:
        """Return the port served on (RuntimeError before `start`)."""
        if self._server is None:
            raise RuntimeError("server not started")
        return int(self._server.server_address[1])

    def start(self) -> Self:
        """Start serving in a daemon thread."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


__all__ = ["LoopbackServer"]
