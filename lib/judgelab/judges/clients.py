"""HTTP clients for OpenAI-compatible chat endpoints, with one error contract for the runner.

Two clients send the same request body and raise the same errors, so the runner's retry,
caching and accounting do not depend on which one is used (`JudgeSpec.client`):

- `aiohttp` (the default): one `aiohttp.ClientSession` per run posts the JSON body to
  `<base_url>/chat/completions` with `Authorization: Bearer <key>` and decodes the JSON
  answer;
- `openai`: the official SDK's `AsyncOpenAI.post` (over its aiohttp transport when available).
  It also reads `OPENAI_ORG_ID`/`OPENAI_PROJECT_ID`, but costs about three times the CPU per
  request (2.1 vs 0.74 ms for a whole run, `make bench`: its request building), which bounds
  throughput at high concurrency on two cores.

No HTTP/1.1 is written here: framing, keep-alive and proxies are the libraries' (issue 32
removed the hand-written `streams` client, which read bytes a server sent past Content-Length
as the next request's answer). What both clients share is below: status → error, the
server's waits, URLs, proxies, TLS.

Errors: `FatalError` for 401/403 (the key is wrong for every request), `RetryableError` for
408/409/429/5xx (with the server's `retry-after-ms`/`Retry-After` wait), timeouts (reason
`connect_timeout` when no TCP connection was made within `connect_timeout_s`, else `timeout`),
dropped connections and answers that are not JSON; `RequestError` for any other 4xx. Messages never
contain the key.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import os
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from judgelab import __version__
from judgelab.core import secrets
from judgelab.errors import FatalError, RequestError, RetryableError, check_choice

CLIENTS = ("aiohttp", "openai")


def retry_after(headers: Any) -> float | None:
    """Return the wait a server asks for (`retry-after-ms` or `Retry-After`), in seconds.

    >>> retry_after({"retry-after": "2"}), retry_after({"retry-after-ms": "150"})
    (2.0, 0.15)
    """
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        with contextlib.suppress(ValueError):
            return max(0.0, float(ms) / 1000)
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    with contextlib.suppress(TypeError, ValueError):
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return None


def malformed_key(key: str) -> str | None:
    """Return why an API key cannot be sent in a header, or None when it can (never the key).

    >>> malformed_key("sk-abc"), malformed_key(" sk-abc")
    (None, "its first character is a whitespace character (' ')")
    """
    if key.endswith(("\r", "\r\n")):  # a CRLF .env line
        return "it ends with a carriage return (\\r), as keys read from a CRLF .env file do"
    for i, ch in enumerate(key):
        if ch.isspace() or not ch.isprintable() or ord(ch) > 126:
            kind = "a whitespace" if ch.isspace() else "a control or non-ASCII"
            last = i == len(key) - 1
            where = f"character {i + 1}"
            where = "first character" if i == 0 else ("last character" if last else where)
            shown = f" ({ch!r})" if ch.isspace() or not ch.isprintable() else ""
            return f"its {where} is {kind} character{shown}"
    return None


def error_message(body: bytes | str, secret: str | None = None) -> str:
    """Return the message of an error body (`{"error": {"message": ...}}`), else its start.

    The message is scrubbed of `secret` and of anything shaped like a credential *before*
    it is clipped to 500 characters, so a clipped message never keeps part of a key.

    >>> error_message(b'{"error": {"message": "bad model"}}')
    'bad model'
    >>> error_message(b'{"error": "key hf_abcdefghijklmnopqrstuv rejected"}')
    'key *** rejected'
    """
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    message = None
    with contextlib.suppress(ValueError, RecursionError):
        data = json.loads(text)
        err = data.get("error") if isinstance(data, dict) else None
        if isinstance(err, dict) and err.get("message"):
            message = str(err["message"])
        elif isinstance(err, str):
            message = err
    if message is None:
        message = text.strip()
    known = (secret,) if secret and secret != "EMPTY" else ()
    return secrets.scrub(message, known)[:500] or "(empty body)"


def raise_for_status(
    status: int, body: bytes | str, headers: Any, secret: str | None = None
) -> None:
    """Raise the runner's error for a non-2xx HTTP status; return for a 2xx one.

    `secret` (the key in use) is scrubbed from the message with every credential shape.
    """
    if 200 <= status < 300:
        return
    msg = f"HTTP {status}: {error_message(body, secret)}"
    if status in (401, 403):
        kind = "AuthenticationError" if status == 401 else "PermissionDeniedError"
        raise FatalError(f"{kind}: {msg}")
    if status in (408, 409, 429) or status >= 500:
        raise RetryableError(str(status), msg, retry_after(headers))
    raise RequestError(msg)


def completions_url(base_url: str) -> str:
    """Return `<base_url>/chat/completions`, keeping a query string of the base URL.

    >>> completions_url("http://127.0.0.1:8000/v1/?api-version=1")
    'http://127.0.0.1:8000/v1/chat/completions?api-version=1'
    """
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/") + "/chat/completions"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def env_proxy(url: str) -> str | None:
    """Return the proxy the environment (HTTP(S)_PROXY, NO_PROXY) names for `url`, or None.

    Looked up once per run: aiohttp's own `trust_env` repeats the lookup (and a .netrc read)
    in a worker thread for every request.
    """
    import urllib.request

    parts = urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme) or None


def ssl_context() -> Any:
    """Return the TLS context for https endpoints: `SSL_CERT_FILE`, else certifi's CA bundle.

    The same trust store the openai SDK (httpx) uses, so an endpoint that works with the SDK
    works here too, also on Pythons without system certificates.
    """
    import ssl

    cafile = os.environ.get("SSL_CERT_FILE")
    if not cafile:
        try:
            import certifi

            cafile = certifi.where()
        except ImportError:  # pragma: no cover - certifi comes with httpx/openai
            cafile = None
    return ssl.create_default_context(cafile=cafile)


def too_large(what: str, limit: int) -> RequestError:
    """Return the error of an answer over `max_response_bytes` (it is never cached)."""
    return RequestError(
        f"response too large: {what}, over max_response_bytes={limit} (not cached; raise "
        "max_response_bytes in the spec to accept such answers)"
    )


def connect_timeout(limit: float | None) -> RetryableError:
    """Return the retryable error of a TCP connection not made within `limit` seconds."""
    return RetryableError("connect_timeout", f"no connection within {limit:g} s")


class ChatClient(Protocol):
    """What the runner needs: post one chat payload, return the decoded JSON answer."""

    async def complete(self, payload: dict[str, Any], body: bytes | None = None) -> Any:
        """Return the decoded JSON body of a 2xx answer, or raise one of the errors above.

        `body`: `payload` already encoded as JSON (UTF-8), when the caller has it.
        """
        ...


def _disconnected(exc: BaseException) -> bool:
    """Return True when a "timeout" was really a dropped connection (see the cause chain)."""
    seen: BaseException | None = exc
    while seen is not None:
        if "Disconnected" in type(seen).__name__ or isinstance(seen, ConnectionError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _connect_timed_out(exc: BaseException) -> bool:
    """True when `exc` or its cause chain holds a connect timeout (httpx or aiohttp)."""
    import aiohttp
    import httpx

    seen: BaseException | None = exc
    for _ in range(10):  # a cause chain is short; never loop on a cycle
        if seen is None:
            return False
        if isinstance(seen, (httpx.ConnectTimeout, aiohttp.ConnectionTimeoutError)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def read_capped(resp: Any, limit: int | None) -> bytes:
    """Return an aiohttp response's body; raise `RequestError` past `limit` bytes.

    A body announced (Content-Length) or streamed over the limit is not read further, so a
    runaway answer costs at most `limit` bytes of memory.
    """
    if limit is None:
        return bytes(await resp.read())
    if resp.content_length is not None and resp.content_length > limit:
        raise too_large(f"{resp.content_length} bytes announced", limit)
    buf = bytearray()
    async for chunk in resp.content.iter_any():
        buf += chunk
        if len(buf) > limit:
            raise too_large(f"more than {limit} bytes", limit)
    return bytes(buf)


class AioHttpChat:
    """Chat requests over one `aiohttp.ClientSession` (keep-alive pool of `concurrency`)."""

    #: The session's total timeout bounds connect, send and read: the runner adds no timer.
    bounds_whole_call = True

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
        self.url = completions_url(base_url)
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.concurrency = concurrency
        self.max_response_bytes = max_response_bytes
        self._session: Any = None
        self._proxy: dict[str, Any] = {}

    async def __aenter__(self) -> AioHttpChat:
        import aiohttp
        from yarl import URL

        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(
                limit=self.concurrency,
                ssl=ssl_context() if self.url.startswith("https:") else None,
            ),
            timeout=aiohttp.ClientTimeout(
                total=self.timeout_s, sock_connect=self.connect_timeout_s
            ),
            headers={
                "Authorization": f"Bearer {self._api_key}",
                "Content-Type": "application/json",
                "Accept": "application/json",
                "User-Agent": f"judgelab/{__version__}",
            },
            raise_for_status=False,
        )
        proxy = env_proxy(self.url)  # HTTP(S)_PROXY / NO_PROXY, as the SDK's clients obey
        if proxy:
            self._proxy = {"proxy": proxy, "proxy_auth": aiohttp.BasicAuth.from_url(URL(proxy))}
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def complete(self, payload: dict[str, Any], body: bytes | None = None) -> Any:
        """Post `payload` (or its encoded `body`); return the decoded JSON of a 2xx answer."""
        import aiohttp

        if body is None:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            async with self._session.post(self.url, data=body, **self._proxy) as resp:
                raw = await read_capped(resp, self.max_response_bytes)
                status, headers = resp.status, resp.headers
        except aiohttp.ConnectionTimeoutError:
            raise connect_timeout(self.connect_timeout_s) from None
        except TimeoutError as exc:
            if _disconnected(exc):
                raise RetryableError("connection", "the server closed the connection") from None
            raise RetryableError("timeout", f"no answer within {self.timeout_s:g} s") from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, OSError) as exc:
            raise RetryableError("connection", f"connection error: {type(exc).__name__}") from None
        raise_for_status(status, raw, headers, self._api_key)
        try:
            return json.loads(raw)
        except ValueError:
            raise RetryableError("malformed", "malformed response: not JSON") from None


class OpenAISDKChat:
    """Chat requests through the official SDK's `AsyncOpenAI.post` (its retries off)."""

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
        self.base_url = base_url
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.concurrency = concurrency
        # The SDK reads the whole body itself: the runner checks the answer's size after.
        self.max_response_bytes = max_response_bytes
        self._client: Any = None

    async def __aenter__(self) -> OpenAISDKChat:
        import httpx
        import openai

        try:
            import aiohttp  # noqa: F401

            http = getattr(openai, "DefaultAioHttpClient", None)
        except ImportError:  # pragma: no cover - aiohttp is a dependency
            http = None
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=self._api_key,
            max_retries=0,
            timeout=httpx.Timeout(self.timeout_s, connect=self.connect_timeout_s),
            **({"http_client": http()} if http is not None else {}),
        )
        await self._client.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._client is not None:
            await self._client.__aexit__(*exc)
            self._client = None

    async def complete(self, payload: dict[str, Any], body: bytes | None = None) -> Any:
        """Post `payload` with the SDK's low-level `post` (it encodes it: `body` is unused)."""
        import openai

        try:
            # `post` sends the body as built and `cast_to=object` returns the decoded JSON:
            # `create` would re-validate the params and build pydantic models, ~2 ms a call.
            return await self._client.post("/chat/completions", cast_to=object, body=payload)
        except openai.APIStatusError as exc:
            headers = getattr(exc.response, "headers", None)
            raise_for_status(exc.status_code, exc.message, headers, self._api_key)
            raise  # pragma: no cover - APIStatusError is never a 2xx
        except (TimeoutError, openai.APITimeoutError) as exc:
            if _connect_timed_out(exc):
                raise connect_timeout(self.connect_timeout_s) from None
            if _disconnected(exc):
                raise RetryableError("connection", "the server closed the connection") from None
            raise RetryableError("timeout", f"no answer within {self.timeout_s:g} s") from None
        except openai.APIConnectionError as exc:
            raise RetryableError("connection", f"connection error: {exc}") from None
        except (ValueError, openai.APIResponseValidationError) as exc:
            msg = f"malformed response: {type(exc).__name__}"
            raise RetryableError("malformed", msg) from None


def open_client(
    kind: str,
    base_url: str,
    api_key: str,
    *,
    timeout_s: float,
    concurrency: int,
    max_response_bytes: int | None = None,
    connect_timeout_s: float | None = None,
) -> Any:
    """Return the chat client `kind` (one of `CLIENTS`), to be used with `async with`.

    `max_response_bytes`: the aiohttp client stops reading a body past it (`RequestError`).
    `connect_timeout_s`: the longest wait for a TCP connection (None: only `timeout_s`).
    """
    check_choice("client", kind, CLIENTS)
    cls: Any = AioHttpChat if kind == "aiohttp" else OpenAISDKChat
    return cls(
        base_url,
        api_key,
        timeout_s=timeout_s,
        concurrency=concurrency,
        max_response_bytes=max_response_bytes,
        connect_timeout_s=connect_timeout_s,
    )


__all__ = [
    "CLIENTS",
    "AioHttpChat",
    "ChatClient",
    "FatalError",
    "OpenAISDKChat",
    "RequestError",
    "RetryableError",
    "completions_url",
    "connect_timeout",
    "env_proxy",
    "error_message",
    "malformed_key",
    "open_client",
    "raise_for_status",
    "read_capped",
    "retry_after",
    "ssl_context",
    "too_large",
]
