"""The event loop of a run's requests: uvloop, 2-5 % less CPU per request (`make bench`).

uvloop where installed, also inside a running loop. Measured in issue 32
(`bench/scale_runner.py`, `aiohttp:1` vs `aiohttp:1:-uvloop`, concurrency 256, 2 shared
cores): 0.66 vs 0.70 ms of CPU per request and 26.8 vs 28.5 s of wall at 10,000 requests
(medians of 4, load 8); 0.72 vs 0.73 ms and 94 vs 100 s at 20,000 (medians of 2, load 15).
A small gain: re-measure on a quiet machine, and drop uvloop if it does not hold.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any


def loop_factory() -> Any:
    """Return uvloop's event loop factory when it is installed, else None (asyncio's loop).

    The loop's own CPU per request is what bounds a run at high concurrency on one core.
    `JUDGELAB_EVENT_LOOP=asyncio` keeps the standard loop.
    """
    if os.environ.get("JUDGELAB_EVENT_LOOP", "").lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:  # not on Windows; the standard loop works the same, only slower
        return None
    return uvloop.new_event_loop


def _run(coro: Any) -> Any:
    with asyncio.Runner(loop_factory=loop_factory()) as r:
        return r.run(coro)


def run_coroutine(coro: Any) -> Any:
    """Run `coro` to completion, also where an event loop already runs (a Jupyter kernel).

    `asyncio.run` refuses to start inside a running loop, so there the coroutine gets its
    own loop in a worker thread. The loop is uvloop's where installed (`loop_factory`).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run(coro)
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="judgelab-run") as pool:
        return pool.submit(_run, coro).result()


__all__ = ["loop_factory", "run_coroutine"]
