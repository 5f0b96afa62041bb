"""A lean HTTP/1.1 chat client on asyncio streams (`client: streams`), for high concurrency.

aiohttp spends about 150 µs of CPU building, sending and reading each request; with hundreds
in flight that, not the endpoint, is what limits a run on one core (issue 24). This client
sends one pre-built request head and the JSON body per call over a pool of keep-alive
connections, and reads the answer framed by Content-Length, chunked transfer or the end of
the connection: a few tens of µs. It speaks HTTP/1.1 over TCP or TLS (certifi's or
`SSL_CERT_FILE`'s trust store), asks for identity encoding (gzip and deflate answers are still
decoded), and goes through no proxy: `clients.open_client` gives aiohttp instead when the
environment names one. Errors, timeouts and `max_response_bytes` follow the `clients` contract
(`wire`); a connection whose exchange did not finish cleanly is closed, never reused.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import zlib
from typing import Any
from urllib.parse import urlsplit

from judgelab import __version__
from judgelab.errors import RetryableError
from judgelab.judges.wire import (
    completions_url,
    connect_timeout,
    raise_for_status,
    ssl_context,
    too_large,
)

HEAD_LIMIT = 256 * 1024  # the longest response head (status line + headers) accepted


class BadResponse(Exception):
    """The server's bytes are not an HTTP/1.x response we can read."""


def parse_head(head: bytes) -> tuple[str, int, dict[str, str]]:
    r"""Return (HTTP version, status, headers with lower-case names) of a response head.

    >>> parse_head(b"HTTP/1.1 429 Too Many\r\nRetry-After: 2\r\n\r\n")
    ('HTTP/1.1', 429, {'retry-after': '2'})
    """
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise BadResponse(f"not an HTTP/1.x status line: {lines[0][:60]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, sep, value = line.partition(":")
            if not sep:
                raise BadResponse(f"malformed header line: {line[:60]!r}")
            headers[name.strip().lower()] = value.strip()
    return parts[0], int(parts[1]), headers


class StreamsChat:
    """Chat requests over a pool of keep-alive asyncio stream connections."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout_s: float,
        concurrency: int,
        max_response_bytes: int | None = None,
        connect_timeout_s: float | None = None,
    ):
        parts = urlsplit(completions_url(base_url))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"client streams needs an http(s) base_url, got {parts.scheme!r}")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.tls else 80)
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.concurrency = concurrency
        self.max_response_bytes = max_response_bytes
        self._api_key = api_key
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host = parts.netloc.rsplit("@", 1)[-1]
        self._head = (
            f"POST {target} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {api_key}\r\n"
            "Content-Type: application/json\r\nAccept: application/json\r\n"
            f"Accept-Encoding: identity\r\nUser-Agent: judgelab/{__version__}\r\n"
            "Content-Length: "
        ).encode("latin-1")
        self._ssl: Any = None
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._open: set[asyncio.StreamWriter] = set()

    async def __aenter__(self) -> StreamsChat:
        self._ssl = ssl_context() if self.tls else None
        return self

    async def __aexit__(self, *exc: object) -> None:
        writers, self._open, self._idle = list(self._open), set(), []
        for w in writers:
            w.close()
        for w in writers:
            with contextlib.suppress(Exception):
                await w.wait_closed()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Return an idle keep-alive connection, else a new one."""
        while self._idle:
            reader, writer = self._idle.pop()
            if not writer.is_closing() and not reader.at_eof():
                return reader, writer
            self._close(writer)
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                reader, writer = await asyncio.open_connection(
                    self.host,
                    self.port,
                    ssl=self._ssl,
                    server_hostname=self.host if self.tls else None,
                    limit=HEAD_LIMIT,
                )
        except TimeoutError:
            raise connect_timeout(self.connect_timeout_s) from None
        except OSError as exc:
            raise RetryableError("connection", f"connection error: {type(exc).__name__}") from None
        self._open.add(writer)
        return reader, writer

    def _close(self, writer: asyncio.StreamWriter) -> None:
        self._open.discard(writer)
        writer.close()

    async def complete(self, payload: dict[str, Any], body: bytes | None = None) -> Any:
        """Post `payload` (or its encoded `body`); return the decoded JSON of a 2xx answer."""
        if body is None:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        reader, writer = await self._connect()
        try:
            writer.write(self._head + b"%d\r\n\r\n" % len(body) + body)
            await writer.drain()
            status, headers, raw, keep = await self._response(reader)
        except (OSError, asyncio.IncompleteReadError) as exc:
            self._close(writer)
            reason = "the server closed the connection"
            if not isinstance(exc, asyncio.IncompleteReadError):
                reason = f"connection error: {type(exc).__name__}"
            raise RetryableError("connection", reason) from None
        except (BadResponse, asyncio.LimitOverrunError, ValueError, zlib.error) as exc:
            self._close(writer)
            raise RetryableError("malformed", f"malformed response: {exc}"[:300]) from None
        except BaseException:  # a timeout's cancellation, a body over the limit: mid-exchange
            self._close(writer)
            raise
        if keep:
            self._idle.append((reader, writer))
        else:
            self._close(writer)
        raise_for_status(status, raw, headers, self._api_key)
        try:
            return json.loads(raw)
        except ValueError:
            raise RetryableError("malformed", "malformed response: not JSON") from None

    async def _response(
        self, reader: asyncio.StreamReader
    ) -> tuple[int, dict[str, str], bytes, bool]:
        """Read one response: (status, headers, body, whether the connection stays open)."""
        while True:
            version, status, headers = parse_head(await reader.readuntil(b"\r\n\r\n"))
            if not 100 <= status < 200:  # an interim answer (100 Continue) is skipped
                break
        connection = headers.get("connection", "").lower()
        keep = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        limit = self.max_response_bytes
        if "chunked" in headers.get("transfer-encoding", "").lower():
            raw = await self._chunked(reader, limit)
        elif "content-length" in headers:
            n = int(headers["content-length"])
            if n < 0:
                raise BadResponse(f"negative Content-Length {n}")
            if limit is not None and n > limit:
                raise too_large(f"{n} bytes announced", limit)
            raw = await reader.readexactly(n)
        else:  # framed by the end of the connection
            keep = False
            raw = await reader.read(limit + 1) if limit is not None else await reader.read()
            if limit is not None and len(raw) > limit:
                raise too_large(f"more than {limit} bytes", limit)
        return status, headers, _decoded(raw, headers, limit), keep

    @staticmethod
    async def _chunked(reader: asyncio.StreamReader, limit: int | None) -> bytes:
        buf = bytearray()
        while True:
            line = await reader.readuntil(b"\r\n")
            size = int(line.split(b";", 1)[0].strip() or b"x", 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                    pass
                return bytes(buf)
            if limit is not None and len(buf) + size > limit:
                raise too_large(f"more than {limit} bytes", limit)
            buf += await reader.readexactly(size)
            if await reader.readexactly(2) != b"\r\n":
                raise BadResponse("chunk not followed by CRLF")


def _decoded(raw: bytes, headers: dict[str, str], limit: int | None) -> bytes:
    """Return `raw` decoded by its Content-Encoding (identity, gzip or deflate)."""
    encoding = headers.get("content-encoding", "identity").lower()
    if encoding in ("", "identity"):
        return raw
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise BadResponse(f"unsupported Content-Encoding {encoding!r}")
    wbits = 31 if "gzip" in encoding else 15
    d = zlib.decompressobj(wbits)
    out = d.decompress(raw, (limit + 1) if limit is not None else 0)
    if limit is not None and len(out) > limit:
        raise too_large(f"more than {limit} bytes decoded", limit)
    return out


__all__ = ["HEAD_LIMIT", "BadResponse", "StreamsChat", "parse_head"]
