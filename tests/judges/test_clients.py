"""The two HTTP clients: same requests on the wire, same errors, the key only in the header."""

from __future__ import annotations

import asyncio

import pytest

from judgelab.judges import clients, runner
from judgelab.judges import spec as spec_mod
from judgelab.judges.cache import RequestCache
from judgelab.testing.items import write_pairwise_items
from judgelab.testing.openai_server import OpenAIServer

KEY = "sk-" + "clients-test-0123456789"


def _spec(url: str, client: str, **kw):
    data = {
        "endpoint": "openai-compatible",
        "model": "test-model",
        "base_url": url,
        "api_key_env": "JL_CLIENT_KEY",
        "template": "cjb.workflow",
        "concurrency": 4,
        "timeout_s": 2,
        "max_retries": 1,
        "backoff_s": 0.001,
        "client": client,
        **kw,
    }
    return spec_mod.from_dict(data)


def test_completions_url_keeps_the_query_and_tolerates_a_trailing_slash():
    assert clients.completions_url("http://h:1/v1") == "http://h:1/v1/chat/completions"
    assert clients.completions_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert clients.completions_url("https://h/x?v=2") == "https://h/x/chat/completions?v=2"


@pytest.mark.parametrize(
    ("status", "error", "reason"),
    [
        (401, clients.FatalError, None),
        (403, clients.FatalError, None),
        (408, clients.RetryableError, "408"),
        (409, clients.RetryableError, "409"),
        (429, clients.RetryableError, "429"),
        (500, clients.RetryableError, "500"),
        (503, clients.RetryableError, "503"),
        (400, clients.RequestError, None),
        (404, clients.RequestError, None),
    ],
)
def test_status_codes_map_to_the_runner_errors(status, error, reason):
    body = b'{"error": {"message": "told you so"}}'
    with pytest.raises(error, match=rf"HTTP {status}: told you so") as info:
        clients.raise_for_status(status, body, {"retry-after": "1.5"})
    if reason is not None:
        assert info.value.reason == reason and info.value.wait_s == 1.5
    clients.raise_for_status(200, b"{}", {})  # a 2xx is no error


def test_error_message_falls_back_to_the_body_start():
    assert clients.error_message(b"<html>bad gateway</html>") == "<html>bad gateway</html>"
    assert clients.error_message(b"") == "(empty body)"
    assert clients.error_message('{"error": "plain"}') == "plain"


def test_env_proxy_honours_no_proxy(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert clients.env_proxy("http://api.example.org/v1") == "http://proxy.invalid:3128"
    assert clients.env_proxy("http://127.0.0.1:8000/v1") is None
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.delenv("http_proxy", raising=False)
    assert clients.env_proxy("http://api.example.org/v1") is None


def test_unknown_client_is_refused_by_the_spec():
    with pytest.raises(
        spec_mod.JudgeSpecError, match=r"key 'client': client must be one of .*, got 'requests'"
    ):
        _spec("http://127.0.0.1:1/v1", "requests")


def test_both_clients_send_the_same_requests_with_the_key_only_in_the_header(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("JL_CLIENT_KEY", KEY)
    items_file = write_pairwise_items(tmp_path / "items.jsonl", 6, benchmark="cl")
    from judgelab.data import catalog

    items = catalog.load_items(str(items_file))
    seen = {}
    tables = {}
    # The server answers 401 unless the request carries `Authorization: Bearer KEY`.
    with OpenAIServer(api_key=KEY) as server:
        for client in clients.CLIENTS:
            server.reset()
            with RequestCache(tmp_path / f"{client}.sqlite") as cache:
                res = runner.run(items, _spec(server.url, client), cache=cache, progress=False)
                assert KEY not in cache.path.read_bytes().decode("latin-1")
            assert (res.summary.answered, res.summary.failed) == (12, 0)
            seen[client] = server.counts
            tables[client] = res.judgments.drop(columns=["latency_s", "created_at"])
    # Identical bodies (the server counts canonical bodies) and identical tables.
    assert seen["aiohttp"] == seen["openai"] and len(seen["aiohttp"]) == 12
    assert tables["aiohttp"].equals(tables["openai"])


@pytest.mark.parametrize("client", clients.CLIENTS)
def test_a_refused_connection_is_retryable_and_names_no_key(client):
    async def go():
        async with clients.open_client(
            client, "http://127.0.0.1:9/v1", KEY, timeout_s=2, concurrency=1
        ) as c:
            await c.complete({"model": "m", "messages": []})

    with pytest.raises(clients.RetryableError) as info:
        asyncio.run(go())
    assert info.value.reason == "connection" and KEY not in str(info.value)


def test_tls_trusts_ssl_cert_file_else_certifi(monkeypatch, tmp_path):
    import certifi

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    n_certifi = len(clients.ssl_context().get_ca_certs())
    assert n_certifi > 10  # certifi's bundle, not an empty store
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    with pytest.raises(FileNotFoundError):
        clients.ssl_context()  # the named file is used, never silently skipped
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    assert len(clients.ssl_context().get_ca_certs()) == n_certifi


@pytest.fixture
def full_backlog():
    """A listener whose accept queue is full and never drained: new SYNs are dropped."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):  # fill the queue; later connection attempts hang
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        fillers.append(s)
    yield port
    for s in (*fillers, listener):
        s.close()


@pytest.mark.parametrize("client", clients.CLIENTS)
def test_a_dropped_connection_attempt_times_out_on_connect_not_on_the_read_timeout(
    client, full_backlog
):
    import time

    async def go():
        async with clients.open_client(
            client,
            f"http://127.0.0.1:{full_backlog}/v1",
            KEY,
            timeout_s=30,
            concurrency=1,
            connect_timeout_s=0.5,
        ) as c:
            await c.complete({"model": "m", "messages": []})

    t0 = time.monotonic()
    with pytest.raises(clients.RetryableError) as info:
        asyncio.run(go())
    assert info.value.reason == "connect_timeout", info.value
    assert time.monotonic() - t0 < 10, "waited for the read timeout"
    assert KEY not in str(info.value)


def test_connect_timeout_is_a_spec_field():
    assert _spec("http://127.0.0.1:1/v1", "aiohttp").connect_timeout_s == 10.0
    assert _spec("http://127.0.0.1:1/v1", "aiohttp", connect_timeout_s=2).connect_timeout_s == 2
    with pytest.raises(spec_mod.JudgeSpecError, match="connect_timeout_s"):
        _spec("http://127.0.0.1:1/v1", "aiohttp", connect_timeout_s=0)


async def _dripping_server(body_s: float) -> tuple[asyncio.AbstractServer, int]:
    """A server that sends its answer's headers, then one body byte every 0.1 s for `body_s`.

    No read ever waits long, so only a bound on the whole call ends it.
    """

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        writer.write(b"Content-Length: 100000\r\n\r\n")
        loop = asyncio.get_running_loop()
        end = loop.time() + body_s
        try:
            while loop.time() < end:
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.1)
        except ConnectionError:
            pass
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.parametrize("client", clients.CLIENTS)
def test_a_slowly_dripping_answer_times_out_after_timeout_s_in_all(client):
    # aiohttp bounds the whole call with the session's total timeout (the runner then adds no
    # timer of its own: `bounds_whole_call`); for the SDK the runner's timer does.
    import time

    from judgelab.judges import loop

    async def go() -> float:
        server, port = await _dripping_server(body_s=10.0)
        spec = _spec(f"http://127.0.0.1:{port}/v1", client, timeout_s=0.6)
        t0 = time.monotonic()
        try:
            async with clients.open_client(
                client, spec.base_url, KEY, timeout_s=spec.timeout_s, concurrency=1
            ) as c:
                with pytest.raises(clients.RetryableError) as info:
                    await loop._call(c, {"model": "m", "messages": []}, spec)
        finally:
            server.close()
        assert info.value.reason == "timeout", info.value
        return time.monotonic() - t0

    assert asyncio.run(go()) < 3.0  # 0.6 s, not the 10 s the server drips for
