"""A run's request phase: ask for what the cache lacks, each distinct key once.

Two ways, same requests, same cache, same counts:

- `request_missing`: the whole plan is made first; with `spec.workers > 1` the uncached
  requests go to worker processes (`judgelab.judges.workers`);
- `request_streamed` (one process): the plan is made in parts of `STREAM_ITEMS` items and
  each part's uncached requests are queued as soon as it is made, so the first requests are
  in flight while the rest of the prompts are still being built.

Either way the answers are parsed into rows while they arrive (`judgelab.judges.prebuild`),
using the CPU the request phase leaves idle.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pandas as pd

from judgelab.judges import table as table_mod
from judgelab.judges.cache import RequestCache
from judgelab.judges.eventloop import run_coroutine
from judgelab.judges.loop import FetchStats, fetch
from judgelab.judges.prebuild import Prebuild
from judgelab.judges.resolved import Resolved
from judgelab.judges.rows import item_records
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.workers import fetch_in_workers, worker_count

STREAM_ITEMS = 64  # items planned per part of a streamed run (~130 requests, a few ms)


@dataclass
class Requested:
    """What the request phase of a run did (nothing for an offline baseline)."""

    stats: FetchStats = field(default_factory=FetchStats)
    hits: int = 0
    planned: int = 0
    skipped: int = 0
    request_s: float = 0.0
    evicted: int = 0
    prebuilt: Prebuild | None = None


def request_missing(
    p: table_mod.Plan,
    cache: RequestCache,
    spec: JudgeSpec,
    progress: bool,
    evict_invalid: bool = False,
    items: pd.DataFrame | None = None,
) -> Requested:
    """Request every planned call the cache lacks (each distinct key once).

    `evict_invalid`: first evict the planned entries `RequestCache.invalid` flags, so they
    are requested (and paid) again. `items`: those `p` was planned over; given, and with
    worker processes fetching, their answers are parsed into rows while they arrive.
    """
    evicted = cache.evict(cache.invalid(p.keys)) if evict_invalid else 0
    have = cache.present(p.keys)
    hits = sum(1 for r in p.requests if r.key in have)
    todo = list({r.key: r for r in p.requests if r.key not in have}.values())
    pre = None
    if items is not None and p.judge is not None and worker_count(spec, len(todo)) > 1:
        pre = Prebuild(item_records(items), p.judge, cache.path, p.requests)
        pre.plan = p
    t_req = time.monotonic()
    stats = fetch_in_workers(
        spec, todo, cache, cached=hits, progress=progress, on_poll=pre.poll if pre else None
    )
    took = time.monotonic() - t_req
    return Requested(stats, hits, len(p.requests), len(p.skipped), took, evicted, pre)


class PlanStream:
    """A plan made part by part; the first part is made on creation (bad input fails early)."""

    def __init__(self, items: pd.DataFrame, judge: Resolved):
        self.judge = judge
        self.records = item_records(items)
        self._parts = table_mod.plan_chunks(items, judge, STREAM_ITEMS, self.records)
        self._first = next(self._parts, table_mod.Plan([], [], judge))
        self.skipped: list[table_mod.Skipped] = []

    def parts(self) -> Iterator[table_mod.Plan]:
        """Yield the plan's parts in order (each once)."""
        yield self._first
        yield from self._parts


def _feed(
    stream: PlanStream, pre: Prebuild, counts: dict[str, int]
) -> Iterator[tuple[list[table_mod.Planned], int]]:
    """Yield each part's uncached requests (keys not seen in earlier parts) and its hits."""
    seen: set[str] = set()
    cached: set[str] = set()
    for part in stream.parts():
        pre.add(part.requests)
        stream.skipped += part.skipped
        fresh = list(dict.fromkeys(r.key for r in part.requests if r.key not in seen))
        seen.update(fresh)
        cached |= pre.present(fresh)
        hits = sum(1 for r in part.requests if r.key in cached)
        counts["hits"] += hits
        by_key = {r.key: r for r in part.requests}
        yield [by_key[k] for k in fresh if k not in cached], hits


def request_streamed(
    stream: PlanStream, cache: RequestCache, spec: JudgeSpec, progress: bool
) -> tuple[Requested, table_mod.Plan]:
    """Plan and request part by part in this process; return what was done and the plan."""
    pre = Prebuild(stream.records, stream.judge, cache.path)
    counts = {"hits": 0}
    t_req = time.monotonic()
    try:
        stats = run_coroutine(
            fetch(
                spec,
                [],
                cache,
                progress=progress,
                feed=_feed(stream, pre, counts),
                on_poll=pre.poll,
            )
        )
    except BaseException:
        pre.close()
        raise
    took = time.monotonic() - t_req
    p = table_mod.Plan(pre.requests, stream.skipped, stream.judge)
    pre.plan = p
    asked = Requested(stats, counts["hits"], len(p.requests), len(p.skipped), took, 0, pre)
    return asked, p


__all__ = ["STREAM_ITEMS", "PlanStream", "Requested", "request_missing", "request_streamed"]
