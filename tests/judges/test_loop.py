"""The request loop's pieces that need no server: backoff, and a fetch with nothing to do."""

from __future__ import annotations

import asyncio
import random

import pytest

from judgelab.judges import loop
from judgelab.judges import spec as spec_mod


def test_backoff_doubles_with_jitter_and_is_capped():
    rng = random.Random(0)
    for attempt in range(4):
        base = 2.0 * 2**attempt
        assert 0.5 * base <= loop.backoff_delay(attempt, 2.0, rng) < 1.5 * base
    assert loop.backoff_delay(20, 2.0, rng) < 1.5 * loop.MAX_BACKOFF_S


def test_nothing_to_fetch_opens_no_client_and_needs_no_key(monkeypatch):
    monkeypatch.delenv("JL_LOOP_KEY", raising=False)
    spec = spec_mod.from_dict(
        {
            "endpoint": "openai-compatible",
            "model": "m",
            "template": "cjb.workflow",
            "api_key_env": "JL_LOOP_KEY",
        }
    )
    stats = asyncio.run(loop.fetch(spec, [], cache=None, progress=False))  # type: ignore[arg-type]
    assert stats == loop.FetchStats()


def test_run_coroutine_works_inside_a_running_loop():
    async def outer():
        return loop.run_coroutine(asyncio.sleep(0, result=7))

    assert asyncio.run(outer()) == 7


def test_runs_on_uvloop_when_installed_and_on_asyncio_when_asked(monkeypatch):
    import asyncio

    async def which():
        return type(asyncio.get_running_loop()).__module__

    uvloop = pytest.importorskip("uvloop")
    assert loop.loop_factory() is uvloop.new_event_loop
    assert loop.run_coroutine(which()).startswith("uvloop")
    monkeypatch.setenv("JUDGELAB_EVENT_LOOP", "asyncio")
    assert loop.loop_factory() is None
    assert loop.run_coroutine(which()).startswith("asyncio")


def test_run_coroutine_inside_a_running_loop_uses_its_own_thread():
    import asyncio

    async def outer():
        async def inner():
            return 42

        return loop.run_coroutine(inner())

    assert asyncio.run(outer()) == 42


def _planned(n: int):
    from judgelab.judges.cache import request_key
    from judgelab.judges.table import Planned

    out = []
    for i in range(n):
        request = {
            "endpoint": "e",
            "model": "m",
            "messages": [{"role": "user", "content": str(i)}],
        }
        out.append(Planned("b", "s", str(i), "", 0, 0, request, request_key(request), i))
    return out


class _Client:
    """Answers every request at once and notes when each was sent."""

    def __init__(self, events: list[str]):
        self.events = events

    async def complete(self, payload, body=None):
        self.events.append(f"send {payload['messages'][0]['content']}")
        await asyncio.sleep(0)
        return {"choices": [{"message": {"content": "A"}, "finish_reason": "stop"}]}


def test_a_worker_sends_its_next_request_while_the_answer_before_is_committed(
    tmp_path, monkeypatch
):
    from judgelab.judges.cache import RequestCache

    events: list[str] = []
    spec = spec_mod.from_dict(
        {
            "endpoint": "openai-compatible",
            "model": "m",
            "template": "cjb.workflow",
            "concurrency": 1,
            "api_key_env": "JL_LOOP_KEY",
        }
    )
    monkeypatch.setenv("JL_LOOP_KEY", "sk-loop")
    todo = _planned(3)
    with RequestCache(tmp_path / "c.sqlite") as cache:
        real, index = cache.write_rows, {p.key: p.item_id for p in todo}

        def write_rows(rows):
            events.append("commit " + ",".join(index[r[0]] for r in rows))
            return real(rows)

        monkeypatch.setattr(cache, "write_rows", write_rows)
        state_client = _Client(events)

        async def go():
            async def open_client(self):
                return state_client

            monkeypatch.setattr(loop._Fetch, "client", open_client)
            return await loop.fetch(spec, todo, cache, progress=False)

        stats = asyncio.run(go())
        assert (stats.answered, stats.failed) == (3, 0)
        assert set(cache.keys()) == {p.key for p in todo}
    # One worker: request 1 went out before answer 0 was committed, and answer 1 waited for
    # that commit, so the worker never held two answers not stored.
    assert events.index("send 1") < events.index("commit 0"), events
    assert events.index("commit 0") < events.index("send 2"), events
