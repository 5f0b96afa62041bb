"""One fetch over `spec.workers` processes: 11-23 % less wall at 20,000 req / 256 (`make bench`).

Measured in issue 32 (`bench/scale_runner.py`, 2 shared cores): 20.2 -> 15.5 s and
25.4 -> 22.7 s with two workers at load 2.4-4.6; at load 8 the gain was within the noise
(26.8 -> 26.0 s, medians of 4 at 10,000 requests), as it must be with no idle core to use;
at load 15, 94 -> 70 s (medians of 2; more processes, a larger share of a crowded machine).
Re-measure on a quiet machine before relying on the figure, and remove the workers if it
does not hold.

One Python process answers a few thousand requests per second at most: at high concurrency
its event loop, not the endpoint, is what limits a run (issue 24). With `workers: N` in the
spec the uncached requests are dealt round-robin to N processes. Each runs the ordinary
request loop (`loop.fetch`: the same retries, deadline and store-on-arrival) with its own
event loop, connection pool and cache connection (SQLite in WAL mode takes their writes in
turn), and `concurrency` is split between them, so the endpoint sees as many requests in
flight as with one process. The parent shows one progress bar and adds up their counters.

A worker that dies without reporting (killed, out of memory) costs nothing already stored:
its requests that are not in the cache afterwards are counted as failed, and the next run
requests them. Processes are forked where that is safe (POSIX, and the caller runs no other
thread; a notebook kernel does), else spawned; `JUDGELAB_WORKER_START` picks the method.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import signal
import sys
import threading
from multiprocessing.connection import wait
from typing import Any

from judgelab.errors import JudgeRunError
from judgelab.judges.cache import RequestCache
from judgelab.judges.eventloop import run_coroutine
from judgelab.judges.loop import FetchStats, fetch, progress_bar
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.table import Planned

#: Fewer uncached requests than this per worker are not worth a process of their own.
MIN_PER_WORKER = 200
POLL_S = 0.25
PR_SET_PDEATHSIG = 1  # prctl(2)
#: Threads that hold no lock a forked child could need (tqdm's idle monitor).
QUIET_THREADS = frozenset({"TMonitor"})


def start_method() -> str:
    """Return how worker processes start: `JUDGELAB_WORKER_START`, else fork where safe."""
    chosen = os.environ.get("JUDGELAB_WORKER_START", "").strip().lower()
    if chosen:
        if chosen not in multiprocessing.get_all_start_methods():
            known = ", ".join(multiprocessing.get_all_start_methods())
            raise ValueError(f"JUDGELAB_WORKER_START={chosen!r}: expected one of {known}")
        return chosen
    forkable = "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"
    others = [
        t
        for t in threading.enumerate()
        if t is not threading.main_thread() and type(t).__name__ not in QUIET_THREADS
    ]
    on_main = threading.current_thread() is threading.main_thread()
    return "fork" if forkable and on_main and not others else "spawn"


def worker_count(spec: JudgeSpec, n_todo: int) -> int:
    """Return how many processes fetch `n_todo` requests (1: the calling process alone).

    >>> from judgelab.judges.spec import JudgeSpec
    >>> s = JudgeSpec(endpoint="openai-compatible", model="m", template="cjb.workflow",
    ...               workers=4, concurrency=64)
    >>> worker_count(s, 100_000), worker_count(s, 500), worker_count(s, 10)
    (4, 2, 1)
    """
    return max(1, min(spec.workers, spec.concurrency, n_todo // MIN_PER_WORKER))


def die_with_parent(parent: int) -> None:
    """Linux: be interrupted (SIGINT) when the parent dies, kill -9 included.

    An orphaned worker would keep requesting, paid, beside the rerun that asks the same
    requests again; interrupted, it stores the answers it holds and stops.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGINT)
    except (OSError, AttributeError):  # pragma: no cover - no prctl in this libc
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os.kill(os.getpid(), signal.SIGINT)


def _worker(
    spec: JudgeSpec,
    shard: list[Planned],
    cache_path: str,
    seed: int | None,
    conn: Any,
    done: Any,
    parent: int,
) -> None:
    """Fetch one shard into the cache; send back ("ok", stats) or ("error", message)."""

    def tick() -> None:
        done.value += 1

    reply: tuple[str, Any]
    try:
        die_with_parent(parent)
        with RequestCache(cache_path) as cache:
            coro = fetch(spec, shard, cache, progress=False, seed=seed, tick=tick)
            stats = run_coroutine(coro)
        reply = ("ok", stats)
    except JudgeRunError as exc:
        reply = ("error", str(exc))
    except KeyboardInterrupt:
        reply = ("error", "interrupted")
    except BaseException as exc:  # report it; the parent counts what is not stored
        reply = ("error", f"worker crashed: {type(exc).__name__}: {exc}")
    with contextlib.suppress(OSError):  # a parent that is gone reads nothing
        conn.send(reply)
    conn.close()


def merge(parts: list[FetchStats]) -> FetchStats:
    """Return the sum of several fetches' counters (their dicts united)."""
    out = FetchStats()
    for s in parts:
        for f in ("requested", "answered", "failed", "retries"):
            setattr(out, f, getattr(out, f) + getattr(s, f))
        out.prompt_tokens += s.prompt_tokens
        out.completion_tokens += s.completion_tokens
        out.cost_usd += s.cost_usd
        for reason, n in s.retry_reasons.items():
            out.retry_reasons[reason] = out.retry_reasons.get(reason, 0) + n
        out.errors.update(s.errors)
        out.flagged.update(s.flagged)
    return out


def _lost(shard: list[Planned], cache: RequestCache, why: str) -> FetchStats:
    """Count a silent worker's requests that are not in the cache as failed."""
    have = cache.present(p.key for p in shard)
    missing = [p for p in shard if p.key not in have]
    stats = FetchStats(requested=len(shard), answered=len(shard) - len(missing))
    stats.failed = len(missing)
    stats.errors = {p.key: why for p in missing}
    return stats


def _stop(procs: list[Any]) -> None:
    """Interrupt live workers (they store what they hold), then make sure they are gone."""
    for p in procs:
        if p.is_alive() and p.pid:
            os.kill(p.pid, signal.SIGINT)
    for p in procs:
        if p.pid is None:  # never started
            continue
        p.join(10)
        if p.is_alive():
            p.terminate()
            p.join(5)


def fetch_in_workers(
    spec: JudgeSpec,
    todo: list[Planned],
    cache: RequestCache,
    *,
    cached: int = 0,
    progress: bool = True,
    seed: int | None = None,
    method: str | None = None,
    on_poll: Any = None,
) -> FetchStats:
    """Request `todo` with `worker_count` processes sharing `cache` (one: in this process).

    `on_poll`: called with no argument about every `POLL_S` while workers run (the runner
    parses the answers stored so far: `judgelab.judges.prebuild`).

    Raises:
        JudgeRunError: a worker stopped on a fatal error (the key refused, the cache not
            writable); what every worker stored is kept.
    """
    n = worker_count(spec, len(todo))
    if n == 1:
        return run_coroutine(fetch(spec, todo, cache, cached=cached, progress=progress, seed=seed))
    spec.api_key()  # a missing key fails here, once, not in every worker
    ctx = multiprocessing.get_context(method or start_method())
    child = dataclasses.replace(spec, concurrency=max(1, spec.concurrency // n))
    shards = [todo[i::n] for i in range(n)]
    procs, conns, sends, counters = [], [], [], []
    for i, shard in enumerate(shards):
        recv, send = ctx.Pipe(duplex=False)
        counter = ctx.Value("q", 0, lock=False)
        wseed = None if seed is None else seed + i
        args = (child, shard, str(cache.path), wseed, send, counter, os.getpid())
        procs.append(ctx.Process(target=_worker, args=args, name=f"judgelab-fetch-{i}"))
        conns.append(recv)
        sends.append(send)
        counters.append(counter)
    replies = _collect(procs, conns, sends, counters, len(todo), spec, cached, progress, on_poll)
    parts, fatal = [], []
    for i, reply in enumerate(replies):
        if reply is None:
            why = f"worker process exited ({procs[i].exitcode}) before answering"
            parts.append(_lost(shards[i], cache, why))
        elif reply[0] == "ok":
            parts.append(reply[1])
        else:
            fatal.append(reply[1])
            parts.append(_lost(shards[i], cache, reply[1]))
    if fatal:
        raise JudgeRunError(fatal[0])
    return merge(parts)


def _collect(
    procs: list[Any],
    conns: list[Any],
    sends: list[Any],
    counters: list[Any],
    total: int,
    spec: JudgeSpec,
    cached: int,
    progress: bool,
    on_poll: Any = None,
) -> list[Any]:
    """Start the workers, show their progress, and return each one's reply (None: none)."""
    bar = progress_bar(spec, total, progress)
    bar.set_postfix(cached=cached, workers=len(procs), refresh=False)
    replies: list[Any] = [None] * len(procs)
    waiting = dict(enumerate(conns))
    try:
        for p, send in zip(procs, sends, strict=True):
            p.start()
            send.close()  # the worker holds the only write end: its death reads as EOF
        while waiting:
            for conn in wait(list(waiting.values()), timeout=POLL_S):
                i = next(k for k, c in waiting.items() if c is conn)
                try:
                    replies[i] = conn.recv()
                except EOFError:  # it died without a word
                    replies[i] = None
                del waiting[i]
            bar.update(sum(c.value for c in counters) - bar.n)
            if on_poll is not None:
                try:
                    on_poll()
                except Exception:  # only a head start: the final build reads everything
                    on_poll = None
    except BaseException:
        _stop(procs)
        raise
    finally:
        bar.close()
    for p in procs:
        p.join()
    return replies


__all__ = ["MIN_PER_WORKER", "fetch_in_workers", "merge", "start_method", "worker_count"]
