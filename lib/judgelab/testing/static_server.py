"""A loopback HTTP file server for download tests (127.0.0.1, a free port, one thread each).

    with StaticServer({"a/b.json": b"{}"}) as server:
        url = server.url("a/b.json")          # http://127.0.0.1:<port>/a/b.json
        server.truncate["a/b.json"] = 10      # send only 10 bytes, announce the full length
        server.override["a/b.json"] = b"xx"   # serve other content than the file
        server.missing.add("a/b.json")        # answer 404
        server.requests                       # [(path, Range header or None), ...]

Range requests (`bytes=N-` and `bytes=N-M`) are answered with 206 and a Content-Range header
unless `honour_range` is False (then 200 with the whole body, as some servers do).
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

from judgelab.testing.loopback import LoopbackServer


class StaticServer(LoopbackServer):
    """Serve a dict of `path -> bytes` on loopback; a context manager that stops on exit."""

    def __init__(self, files: dict[str, bytes] | None = None, *, honour_range: bool = True):
        self.files: dict[str, bytes] = dict(files or {})
        self.missing: set[str] = set()
        self.truncate: dict[str, int] = {}
        self.override: dict[str, bytes] = {}
        self.status: dict[str, int] = {}
        self.honour_range = honour_range
        self.requests: list[tuple[str, str | None]] = []
        super().__init__()

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        """Return the file-serving handler bound to this server."""
        return _make_handler(self)

    @property
    def base_url(self) -> str:
        """Return `http://127.0.0.1:<port>/`."""
        return f"http://127.0.0.1:{self.port}/"

    def url(self, path: str) -> str:
        """Return the URL of `path` on this server."""
        return self.base_url + path.lstrip("/")

    def count(self, path: str) -> int:
        """Return how many requests asked for `path`."""
        return sum(1 for p, _ in self.requests if p == path.lstrip("/"))


def _parse_range(header: str, size: int) -> tuple[int, int] | None:
    """Return (start, end inclusive) for `bytes=N-` / `bytes=N-M`; None if unsatisfiable."""
    spec = header.strip().removeprefix("bytes=")
    start_s, _, end_s = spec.partition("-")
    start = int(start_s)
    end = int(end_s) if end_s else size - 1
    if start >= size or end < start:
        return None
    return start, min(end, size - 1)


def _make_handler(server: StaticServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Keep test output quiet."""

        def do_GET(self) -> None:  # noqa: N802
            """Serve one file, honouring the server's fault settings."""
            path = unquote(urlsplit(self.path).path).lstrip("/")
            rng = self.headers.get("Range")
            server.requests.append((path, rng))
            if path in server.status:
                self._reply(server.status[path], b"error\n")
                return
            if path in server.missing or path not in server.files:
                self._reply(404, b"not found\n")
                return
            body = server.override.get(path, server.files[path])
            status, headers = 200, {}
            if rng and server.honour_range:
                span = _parse_range(rng, len(body))
                if span is None:
                    self._reply(416, b"", {"Content-Range": f"bytes */{len(body)}"})
                    return
                start, end = span
                headers["Content-Range"] = f"bytes {start}-{end}/{len(body)}"
                body, status = body[start : end + 1], 206
            announced = len(body)
            if path in server.truncate:
                body = body[: server.truncate[path]]
            self._reply(status, body, headers, length=announced)

        def _reply(
            self,
            status: int,
            body: bytes,
            headers: dict[str, str] | None = None,
            *,
            length: int | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body) if length is None else length))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            if length is not None and length != len(body):
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

    return Handler
