"""The lean HTTP/1.1 client (`client: streams`) against scripted raw answers (loopback)."""

from __future__ import annotations

import asyncio
import gzip
import json

import pytest

from judgelab.judges import clients
from judgelab.judges.streams import BadResponse, StreamsChat, parse_head

KEY = "sk-" + "test-SECRET-streams-0123456789"
ANSWER = {"choices": [{"message": {"content": "[[A]]"}, "finish_reason": "stop"}]}
BODY = json.dumps(ANSWER).encode()


def _head(status: str = "200 OK", version: str = "HTTP/1.1", **headers: str) -> bytes:
    lines = [f"{version} {status}", *(f"{k.replace('_', '-')}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _exchange(replies, n_calls=1, limit=None, timeout_s=5.0):
    """Serve `replies` (one bytes per request, or a callable) and make `n_calls` calls.

    Returns (results or exceptions, the raw requests the server read, connections opened).
    """
    seen: list[bytes] = []
    conns = []

    async def handle(reader, writer):
        conns.append(writer)
        try:
            while replies:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(
                    parse_head(b"HTTP/1.1 200 X\r\n" + head.split(b"\r\n", 1)[1])[2][
                        "content-length"
                    ]
                )
                seen.append(head + await reader.readexactly(length))
                reply = replies.pop(0)
                if callable(reply):
                    await reply(writer)
                    return
                writer.write(reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        out = []
        async with StreamsChat(
            f"http://127.0.0.1:{port}/v1",
            KEY,
            timeout_s=timeout_s,
            concurrency=1,
            max_response_bytes=limit,
            connect_timeout_s=1.0,
        ) as c:
            for _ in range(n_calls):
                try:
                    async with asyncio.timeout(timeout_s):
                        out.append(await c.complete({"model": "m", "messages": []}))
                except Exception as exc:
                    out.append(exc)
        server.close()
        return out

    return asyncio.run(main()), seen, conns


def test_content_length_answers_reuse_one_keep_alive_connection():
    reply = _head(content_length=str(len(BODY))) + BODY
    out, seen, conns = _exchange([reply, reply, reply], n_calls=3)
    assert out == [ANSWER] * 3 and len(conns) == 1
    first = seen[0].decode()
    assert first.startswith("POST /v1/chat/completions HTTP/1.1\r\n")
    assert f"Authorization: Bearer {KEY}" in first and "Accept-Encoding: identity" in first
    assert json.loads(seen[0].split(b"\r\n\r\n", 1)[1]) == {"model": "m", "messages": []}


def test_chunked_gzip_interim_and_close_delimited_answers_are_read():
    chunked = _head(transfer_encoding="chunked") + b"".join(
        b"%x;ext=1\r\n%s\r\n" % (len(BODY[i : i + 7]), BODY[i : i + 7])
        for i in range(0, len(BODY), 7)
    )
    chunked += b"0\r\nX-Trailer: 1\r\n\r\n"
    zipped = gzip.compress(BODY)
    gz = _head(content_encoding="gzip", content_length=str(len(zipped))) + zipped
    interim = _head("100 Continue") + _head(content_length=str(len(BODY))) + BODY
    closing = _head(version="HTTP/1.0") + BODY  # no length: the end of the connection frames it
    out, _, conns = _exchange([chunked, gz, interim, closing], n_calls=4)
    assert out == [ANSWER] * 4
    assert len(conns) == 1  # HTTP/1.0 without keep-alive is the last answer on its connection


def test_http_errors_follow_the_clients_contract_without_the_key():
    err = json.dumps({"error": {"message": f"rate limited for {KEY}"}}).encode()
    r429 = _head("429 Too Many", content_length=str(len(err)), retry_after_ms="150") + err
    r401 = _head("401 Unauthorized", content_length=str(len(err))) + err
    r400 = _head("400 Bad Request", content_length=str(len(err)), connection="close") + err
    out, _, conns = _exchange([r429, r401, r400], n_calls=3)
    assert isinstance(out[0], clients.RetryableError) and out[0].reason == "429"
    assert out[0].wait_s == pytest.approx(0.15)
    assert isinstance(out[1], clients.FatalError) and isinstance(out[2], clients.RequestError)
    assert all(KEY not in str(e) for e in out)
    assert len(conns) == 1


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (b"SMTP ready\r\n\r\n", "malformed"),
        (_head(content_length="100") + BODY[:10], "connection"),  # cut short, then closed
        (_head(transfer_encoding="chunked") + b"zz\r\n", "malformed"),
        (_head(content_encoding="br", content_length=str(len(BODY))) + BODY, "malformed"),
    ],
)
def test_broken_answers_are_retryable_and_the_connection_is_not_reused(reply, reason):
    good = _head(content_length=str(len(BODY))) + BODY

    async def broken_then_close(writer):
        writer.write(reply)
        await writer.drain()

    out, _, conns = _exchange([broken_then_close, good], n_calls=2)
    assert isinstance(out[0], clients.RetryableError) and out[0].reason == reason, out[0]
    assert out[1] == ANSWER and len(conns) == 2  # the second call got a fresh connection


def test_a_whole_answer_that_is_not_json_is_malformed_and_keeps_its_connection():
    good = _head(content_length=str(len(BODY))) + BODY
    out, _, conns = _exchange([_head(content_length="5") + b"nope!", good], n_calls=2)
    assert isinstance(out[0], clients.RetryableError) and out[0].reason == "malformed"
    assert out[1] == ANSWER and len(conns) == 1  # the exchange itself was complete


def test_answers_over_max_response_bytes_are_refused_before_reading_them():
    big = b"x" * 5000
    announced = _head(content_length=str(len(big))) + big
    chunked = _head(transfer_encoding="chunked") + b"%x\r\n%s\r\n0\r\n\r\n" % (len(big), big)
    bomb = gzip.compress(b"{" + b" " * 50_000 + b"}")
    zipped = _head(content_encoding="gzip", content_length=str(len(bomb))) + bomb
    out, _, _ = _exchange([announced, chunked, zipped], n_calls=3, limit=2048)
    assert all(isinstance(e, clients.RequestError) for e in out), out
    assert all("max_response_bytes=2048" in str(e) for e in out)


def test_a_refused_or_silent_server_maps_to_connection_and_timeout():
    async def go(url):
        async with StreamsChat(url, KEY, timeout_s=1, concurrency=1, connect_timeout_s=1) as c:
            await c.complete({"model": "m", "messages": []})

    with pytest.raises(clients.RetryableError) as info:
        asyncio.run(go("http://127.0.0.1:9/v1"))
    assert info.value.reason == "connection"

    async def hang(writer):
        await asyncio.sleep(3)

    out, _, _ = _exchange([hang], n_calls=1, timeout_s=0.3)
    assert isinstance(out[0], TimeoutError)  # the runner's own timeout ends the call


def test_parse_head_rejects_what_is_not_http():
    with pytest.raises(BadResponse):
        parse_head(b"HTTP/1.1 abc\r\n\r\n")
    with pytest.raises(BadResponse):
        parse_head(b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n")
    with pytest.raises(ValueError, match="http"):
        StreamsChat("ftp://host/v1", KEY, timeout_s=1, concurrency=1)


def test_a_proxy_in_the_environment_gives_aiohttp(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    url = "http://example.invalid/v1"
    c = clients.open_client("streams", url, KEY, timeout_s=1, concurrency=1)
    assert isinstance(c, clients.AioHttpChat)
    monkeypatch.delenv("HTTP_PROXY")
    c = clients.open_client("streams", url, KEY, timeout_s=1, concurrency=1)
    assert isinstance(c, StreamsChat)
