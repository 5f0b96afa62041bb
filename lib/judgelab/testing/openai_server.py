"""A loopback OpenAI-compatible chat server for tests and benchmarks (never a real model).

It answers `POST /v1/chat/completions` deterministically from the request, optionally lists
`GET /v1/models`, counts requests per canonical request (sha256 of the canonical JSON body),
and can inject faults. It speaks plain HTTP/1.1 with keep-alive over asyncio streams, so one
process serves 64 concurrent clients at 50 ms latency at well over 1,000 requests/s.

Use it in a background thread::

    with OpenAIServer(latency_s=0.01, faults=FaultPlan(rate=0.3)) as server:
        client = AsyncOpenAI(base_url=server.url, api_key="sk-test", max_retries=0)
        ...
        server.counts  # {canonical request sha256: number of times it was received}

or as a subprocess (for kill -9 tests and `make bench`)::

    python -m judgelab.testing.openai_server --port 8765 --latency-ms 50 --fault-rate 0.2

`GET /_stats` returns `{"total": n, "counts": {key: n}}` as JSON; `POST /_reset` clears them.

Faults (`FaultPlan.kinds`), each chosen per canonical request from a hash, so a run is
reproducible:

| kind              | what the client sees                                             |
|-------------------|------------------------------------------------------------------|
| `429`             | HTTP 429 with `Retry-After` (seconds, may be fractional)         |
| `500`             | HTTP 500 with an OpenAI-style error body                         |
| `timeout`         | no answer for `hang_s` seconds (longer than the client timeout)  |
| `truncated_json`  | HTTP 200 whose JSON body is cut in half                          |
| `empty_choices`   | HTTP 200 with `"choices": []`                                    |
| `drop`            | the connection is closed without an answer                       |
| `empty_content`   | HTTP 200, `content: ""` (a real, if useless, model output)       |
| `length`          | HTTP 200, content cut short and `finish_reason: "length"`        |
| `non_text_content`| HTTP 200 whose `content` is a number, a list or an object        |
| `401`             | HTTP 401 "invalid API key" (as a wrong key gives)               |
| `extra_bytes`     | HTTP 200, then bytes past its Content-Length: a whole second     |
|                   | answer (`STALE_CONTENT`), as a broken server or proxy sends      |

Transport faults (`429`, `500`, `timeout`, `truncated_json`, `empty_choices`, `drop`) hit only
the first `attempts` receptions of a request, so a client that retries gets the same final
answer as without faults. `empty_content` and `length` are answers, not transport errors,
`401` is a configuration error and `extra_bytes` a broken server: these are returned on every
reception of the affected requests. A client must never read the bytes past Content-Length as
the answer of its next request on the connection.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from judgelab.testing.answers import canonical_key, completion, default_responder, hash_int

TRANSPORT_FAULTS = ("429", "500", "timeout", "truncated_json", "empty_choices", "drop")
ANSWER_FAULTS = ("empty_content", "length", "non_text_content")
#: What `non_text_content` sends as `content`, chosen per request.
NON_TEXT_CONTENT: tuple[Any, ...] = (42, ["A"], {"verdict": "A"})
PERSISTENT_FAULTS = (*ANSWER_FAULTS, "401", "extra_bytes")
ALL_FAULTS = TRANSPORT_FAULTS + PERSISTENT_FAULTS

Responder = Callable[[dict[str, Any]], str]
#: The content of the stale answer an `extra_bytes` fault sends past Content-Length.
STALE_CONTENT = "**Result:** A\n(a stale answer sent past Content-Length)"


@dataclass
class FaultPlan:
    """Which requests get which fault; decided from a hash of the canonical request.

    Args:
        rate: Fraction of canonical requests that get a fault.
        kinds: Fault kinds to draw from (see the module docstring).
        attempts: How many first receptions of an affected request get a transport fault.
        retry_after_s: The `Retry-After` value sent with 429 answers.
        hang_s: How long a `timeout` fault waits before closing the connection.
        seed: Changes which requests are affected.
    """

    rate: float = 0.0
    kinds: tuple[str, ...] = TRANSPORT_FAULTS
    attempts: int = 1
    retry_after_s: float = 0.05
    hang_s: float = 5.0
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in ALL_FAULTS]
        if unknown:
            raise ValueError(f"unknown fault kind(s) {unknown}; known: {list(ALL_FAULTS)}")
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate {self.rate} outside [0, 1]")

    def fault_for(self, key: str, reception: int) -> str | None:
        """Return the fault for the `reception`-th (0-based) reception of `key`, or None."""
        if self.rate <= 0 or not self.kinds:
            return None
        h = hash_int(f"{self.seed}:{key}")
        if (h % 10_000) / 10_000 >= self.rate:
            return None
        kind = self.kinds[(h // 10_000) % len(self.kinds)]
        if kind in PERSISTENT_FAULTS:
            return kind
        return kind if reception < self.attempts else None


@dataclass
class _State:
    responder: Responder
    latency_s: float
    faults: FaultPlan
    models: tuple[str, ...]
    api_key: str | None = None
    counts: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _http(status: int, payload: bytes, *, headers: dict[str, str] | None = None) -> bytes:
    reason = {
        200: "OK",
        400: "Bad Request",
        401: "Unauthorized",
        404: "Not Found",
        429: "Too Many Requests",
    }.get(status, "Internal Server Error" if status >= 500 else "Error")
    lines = [
        f"HTTP/1.1 {status} {reason}",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
        "Connection: keep-alive",
    ]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload


def _json(obj: Any) -> bytes:
    return json.dumps(obj).encode("utf-8")


async def _answer(
    state: _State, method: str, path: str, raw: bytes, headers: dict[str, str] | None = None
) -> bytes | str | None:
    """Return the bytes to send, "hang", "drop", or None to close."""
    path = path.split("?", 1)[0]
    wanted = state.api_key
    if wanted is not None and (headers or {}).get("authorization") != f"Bearer {wanted}":
        return _http(
            401,
            _json({"error": {"message": "missing or wrong API key", "type": "invalid_api_key"}}),
        )
    if method == "GET" and path.rstrip("/") in ("/v1/models", "/models"):
        data = [{"id": m, "object": "model", "owned_by": "judgelab-test"} for m in state.models]
        return _http(200, _json({"object": "list", "data": data}))
    if method == "GET" and path == "/_stats":
        with state.lock:
            counts = dict(state.counts)
        return _http(200, _json({"total": sum(counts.values()), "counts": counts}))
    if method == "POST" and path == "/_reset":
        with state.lock:
            state.counts.clear()
        return _http(200, _json({"ok": True}))
    if method != "POST" or path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
        return _http(404, _json({"error": {"message": f"no route {method} {path}"}}))
    try:
        body = json.loads(raw.decode("utf-8"))
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise ValueError("body must be an object with a messages list")
    except (ValueError, UnicodeDecodeError) as exc:
        return _http(400, _json({"error": {"message": f"bad request: {exc}"}}))
    key = canonical_key(body)
    with state.lock:
        reception = state.counts[key]
        state.counts[key] += 1
    fault = state.faults.fault_for(key, reception)
    if state.latency_s > 0:
        await asyncio.sleep(state.latency_s)
    if fault == "429":
        return _http(
            429,
            _json({"error": {"message": "rate limited", "type": "rate_limit"}}),
            headers={"Retry-After": f"{state.faults.retry_after_s:g}"},
        )
    if fault == "401":
        return _http(
            401,
            _json(
                {"error": {"message": "Incorrect API key provided.", "type": "invalid_api_key"}}
            ),
        )
    if fault == "500":
        return _http(500, _json({"error": {"message": "injected server error"}}))
    if fault == "timeout":
        await asyncio.sleep(state.faults.hang_s)
        return None
    if fault == "drop":
        return None
    content = state.responder(body)
    if fault == "empty_choices":
        payload = completion(body, content, "stop")
        payload["choices"] = []
        return _http(200, _json(payload))
    if fault == "empty_content":
        return _http(200, _json(completion(body, "", "stop")))
    if fault == "non_text_content":
        odd = NON_TEXT_CONTENT[hash_int(key) % len(NON_TEXT_CONTENT)]
        return _http(200, _json(completion(body, odd, "stop")))
    if fault == "length":
        return _http(200, _json(completion(body, content[: max(1, len(content) // 3)], "length")))
    payload = _json(completion(body, content, "stop"))
    if fault == "truncated_json":
        return _http(200, payload[: len(payload) // 2])
    if fault == "extra_bytes":
        return _http(200, payload) + _http(200, _json(completion(body, STALE_CONTENT, "stop")))
    return _http(200, payload)


async def _serve_connection(
    state: _State, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                return
            lines = head.decode("latin-1").split("\r\n")
            parts = lines[0].split(" ")
            if len(parts) < 2:
                return
            method, path = parts[0].upper(), parts[1]
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            length = int(headers.get("content-length", "0") or 0)
            raw = await reader.readexactly(length) if length else b""
            out = await _answer(state, method, path, raw, headers)
            if out is None:
                return
            writer.write(out)
            await writer.drain()
            if headers.get("connection", "").lower() == "close":
                return
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        with contextlib.suppress(Exception):
            writer.close()


class OpenAIServer:
    """A deterministic OpenAI-compatible server on 127.0.0.1, run in a background thread.

    Args:
        responder: Maps a request body to the assistant's text (default: `default_responder`).
        latency_s: Fixed delay before every answer.
        faults: Which requests get injected faults (default: none).
        port: Port to bind (0 = a free one).
        models: Model ids listed by `GET /v1/models`.
        api_key: If set, every request must carry `Authorization: Bearer <api_key>` (else 401).
    """

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        latency_s: float = 0.0,
        faults: FaultPlan | None = None,
        port: int = 0,
        models: tuple[str, ...] = ("test-model",),
        api_key: str | None = None,
    ):
        self._state = _State(
            responder=responder or default_responder,
            latency_s=latency_s,
            faults=faults or FaultPlan(),
            models=models,
            api_key=api_key,
        )
        self._port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopping: asyncio.Event | None = None

    @property
    def port(self) -> int:
        """Return the bound port."""
        return self._port

    @property
    def url(self) -> str:
        """Return the base URL to give an OpenAI client (ends in `/v1`)."""
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def counts(self) -> dict[str, int]:
        """Return how many times each canonical request was received (retries included)."""
        with self._state.lock:
            return dict(self._state.counts)

    @property
    def total(self) -> int:
        """Return the number of chat requests received."""
        return sum(self.counts.values())

    def reset(self) -> None:
        """Forget the request counts."""
        with self._state.lock:
            self._state.counts.clear()

    def set_faults(self, faults: FaultPlan) -> None:
        """Replace the fault plan (takes effect for the next request)."""
        self._state.faults = faults

    def start(self) -> OpenAIServer:
        """Start serving in a daemon thread; return self once the port is bound."""

        async def main() -> None:
            self._stopping = asyncio.Event()
            conns: set[asyncio.Task[None]] = set()

            async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
                task = asyncio.current_task()
                assert task is not None
                conns.add(task)
                try:
                    await _serve_connection(self._state, r, w)
                except asyncio.CancelledError:
                    # Swallowed so asyncio's stream callback does not log a cancelled task.
                    pass
                finally:
                    conns.discard(task)

            server = await asyncio.start_server(handler, "127.0.0.1", self._port, backlog=1024)
            self._port = server.sockets[0].getsockname()[1]
            self._ready.set()
            await self._stopping.wait()
            server.close()
            for task in list(conns):
                task.cancel()
            await asyncio.gather(*conns, return_exceptions=True)
            await server.wait_closed()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(main())
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="openai-test-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("test server did not start within 10 s")
        return self

    def stop(self) -> None:
        """Stop serving, close open connections and join the thread."""
        if self._loop is not None and self._thread is not None:
            stopping = self._stopping
            assert stopping is not None
            self._loop.call_soon_threadsafe(stopping.set)
            self._thread.join(10)
            self._loop = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def serve_forever(
    *, port: int, latency_s: float = 0.0, faults: FaultPlan | None = None
) -> None:
    """Serve on 127.0.0.1:`port` in the current event loop until cancelled."""
    state = _State(
        responder=default_responder,
        latency_s=latency_s,
        faults=faults or FaultPlan(),
        models=("test-model",),
    )

    async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _serve_connection(state, r, w)

    server = await asyncio.start_server(handler, "127.0.0.1", port, backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    print(f"serving http://127.0.0.1:{bound}/v1", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    """Run the server as a process (`python -m judgelab.testing.openai_server`)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = any free)")
    p.add_argument("--latency-ms", type=float, default=0.0, help="fixed latency per answer")
    p.add_argument("--fault-rate", type=float, default=0.0, help="share of requests faulted")
    p.add_argument(
        "--faults", default=",".join(TRANSPORT_FAULTS), help="comma-separated fault kinds"
    )
    p.add_argument("--fault-attempts", type=int, default=1)
    p.add_argument("--retry-after-s", type=float, default=0.05)
    p.add_argument("--hang-s", type=float, default=5.0)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    faults = FaultPlan(
        rate=args.fault_rate,
        kinds=tuple(k for k in args.faults.split(",") if k),
        attempts=args.fault_attempts,
        retry_after_s=args.retry_after_s,
        hang_s=args.hang_s,
        seed=args.seed,
    )
    try:
        asyncio.run(serve_forever(port=args.port, latency_s=args.latency_ms / 1000, faults=faults))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = [
    "ALL_FAULTS",
    "ANSWER_FAULTS",
    "NON_TEXT_CONTENT",
    "PERSISTENT_FAULTS",
    "STALE_CONTENT",
    "TRANSPORT_FAULTS",
    "FaultPlan",
    "OpenAIServer",
    "canonical_key",
    "default_responder",
    "main",
    "serve_forever",
]
