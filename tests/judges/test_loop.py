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
