"""HTTP clients for OpenAI-compatible chat endpoints, with one error contract for the runner.

Two clients send the same request body and raise the same errors, so the runner's retry,
caching and accounting do not depend on which one is used (`JudgeSpec.client`):

- `aiohttp` (the default): one `aiohttp.ClientSession` per run posts the JSON body to
  `<base_url>/chat/completions` with `Authorization: Bearer <key>` and decodes the JSON
  answer. A whole run costs about 0.35 ms of CPU per request (`make bench`), so one process
  answers up to ~2,500 requests/s;
- `openai`: the official SDK's `AsyncOpenAI.post` (over its aiohttp transport when available).
  It also reads `OPENAI_ORG_ID`/`OPENAI_PROJECT_ID`, but a run costs about 1.1 ms of CPU per
  request (its request building), which bounds throughput at high concurrency on two cores;
- `streams`: a lean HTTP/1.1 client on asyncio streams (`judgelab.judges.streams`), for
  hundreds of requests in flight against a local server (vLLM, SGLang): about 0.21 ms of CPU
  per request for a whole run; no proxy support (with a proxy in the environment it is
  aiohttp that goes).

Errors: `FatalError` for 401/403 (the key is wrong for every request), `RetryableError` for
408/409/429/5xx (with the server's `retry-after-ms`/`Retry-After` wait), timeouts (reason
`connect_timeout` when no TCP connection was made within `connect_timeout_s`, else `timeout`),
dropped connections and answers that are not JSON; `RequestError` for any other 4xx. Messages never
contain the key.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from judgelab import __version__
from judgelab.errors import FatalError as FatalError
from judgelab.errors import RequestError as RequestError
from judgelab.errors import RetryableError as RetryableError
from judgelab.errors import check_choice
from judgelab.judges.wire import completions_url as completions_url
from judgelab.judges.wire import connect_timeout, too_large
from judgelab.judges.wire import env_proxy as env_proxy
from judgelab.judges.wire import error_message as error_message
from judgelab.judges.wire import malformed_key as malformed_key
from judgelab.judges.wire import raise_for_status as raise_for_status
from judgelab.judges.wire import retry_after as retry_after
from judgelab.judges.wire import ssl_context as ssl_context

CLIENTS = ("aiohttp", "openai", "streams")


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
    if kind == "streams":
        from judgelab.judges.streams import StreamsChat

        cls = AioHttpChat if env_proxy(completions_url(base_url)) else StreamsChat
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
    "error_message",
    "malformed_key",
    "open_client",
    "raise_for_status",
    "read_capped",
    "retry_after",
    "ssl_context",
]
