"""A run's request phase: ask for what the cache lacks, each distinct key once.

The plan is made first. The uncached keys are claimed (`judgelab.judges.claims`), so two
runs on one cache never request one key twice: a run waits for the keys another run holds and
reads their answers from the cache. Keys held by submitted batches are not requested. The
claimed requests go to the request loop in this process, or, with `spec.workers > 1`, to
worker processes (`judgelab.judges.workers`), whose answers the waiting parent parses into
rows while they arrive (`judgelab.judges.prebuild`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from judgelab.judges import batch_registry
from judgelab.judges import table as table_mod
from judgelab.judges.cache import RequestCache
from judgelab.judges.claims import Claims
from judgelab.judges.loop import FetchStats
from judgelab.judges.prebuild import Prebuild
from judgelab.judges.rows import item_records
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.workers import fetch_in_workers, merge, worker_count

if TYPE_CHECKING:  # annotations only: the judge path loads no pandas (issue 38, 3)
    import pandas as pd


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
    held: int = 0  # keys held by batches not collected yet: not requested (issue 32 item 9)
    from_other_runs: int = 0  # keys another run was fetching: its answers read, not paid


def held_keys(spec: JudgeSpec, held: Collection[str] | None) -> set[str]:
    """Return the keys a run leaves to batches: `held`, or the registry's when None."""
    if held is not None:
        return set(held)
    if spec.is_offline:
        return set()
    return set(batch_registry.Registry().held_keys(spec.judge_id))


def request_missing(
    p: table_mod.Plan,
    cache: RequestCache,
    spec: JudgeSpec,
    progress: bool,
    evict_invalid: bool = False,
    items: pd.DataFrame | None = None,
    held: Collection[str] = (),
) -> Requested:
    """Request every planned call the cache lacks (each distinct key once, by one run).

    `evict_invalid`: first evict the planned entries `RequestCache.invalid` flags, so they
    are requested (and paid) again. `items`: those `p` was planned over; given, and with
    worker processes fetching, their answers are parsed into rows while they arrive.
    `held`: keys held by submitted batches, not requested (their answers come by batch).

    The keys are claimed first (`judgelab.judges.claims`); those another live run is
    fetching are waited for and read from the cache, never requested twice.
    """
    evicted = cache.evict(cache.invalid(p.keys)) if evict_invalid else 0
    have = cache.present(p.keys)
    hits = sum(1 for r in p.requests if r.key in have)
    todo = {r.key: r for r in p.requests if r.key not in have}
    skip = {k for k in held if k in todo}
    todo = {k: r for k, r in todo.items() if k not in skip}
    pre = None
    if items is not None and p.judge is not None and worker_count(spec, len(todo)) > 1:
        pre = Prebuild(item_records(items), p, cache.path)
    t_req = time.monotonic()
    stats, others = FetchStats(), 0
    if todo:  # a cached rerun claims nothing
        stats, others = _fetch_claimed(todo, cache, spec, hits, progress, pre)
    took = time.monotonic() - t_req
    return Requested(
        stats, hits, len(p.requests), len(p.skipped), took, evicted, pre, len(skip), others
    )


def _fetch_claimed(
    todo: dict[str, table_mod.Planned],
    cache: RequestCache,
    spec: JudgeSpec,
    hits: int,
    progress: bool,
    pre: Prebuild | None,
) -> tuple[FetchStats, int]:
    """Claim `todo`; fetch ours, wait for what other runs hold, fetch what they drop.

    Returns the fetch counters and how many keys another run answered meanwhile.
    """
    deadline = time.monotonic() + spec.deadline_s if spec.deadline_s else None
    parts: list[FetchStats] = []
    told = False
    with Claims(cache) as claims:
        got = claims.take(list(todo))
        others = len(got.answered)  # stored since the run looked: by another run
        while got.mine or got.busy:
            if got.mine:
                mine = [todo[k] for k in got.mine]
                on_poll = pre.poll if pre else None
                later = _within(spec, deadline) if parts else spec
                parts.append(
                    fetch_in_workers(
                        later, mine, cache, cached=hits, progress=progress, on_poll=on_poll
                    )
                )
            if not got.busy:
                break
            if not told:
                _say_waiting(spec, got.busy)
                told = True
            got = claims.wait(got.busy, deadline)
            others += len(got.answered)
            if got.busy and not got.mine and deadline and time.monotonic() > deadline:
                parts.append(_not_waited(got.busy, spec))
                break
    return merge(parts), others


def _within(spec: JudgeSpec, deadline: float | None) -> JudgeSpec:
    """Return `spec` with what is left of the request phase's deadline (if it has one).

    For the keys a run takes over after waiting (their holder gave up on them or died).
    """
    if deadline is None:
        return spec
    return replace(spec, deadline_s=max(deadline - time.monotonic(), 0.001))


def _say_waiting(spec: JudgeSpec, busy: dict[str, int]) -> None:
    pids = ", ".join(str(p) for p in sorted(set(busy.values())))
    print(
        f"{spec.judge_id}: {len(busy)} request(s) are in flight in another judgelab run on this "
        f"cache (process {pids}); waiting for its answers instead of paying for them twice",
        file=sys.stderr,
    )


def _not_waited(busy: dict[str, int], spec: JudgeSpec) -> FetchStats:
    """Count the keys still in another run's hands at the run deadline as failed."""
    note = (
        f"not requested: in flight in another run (process {{}}) when the run deadline of "
        f"{spec.deadline_s:g} s passed (deadline_s); rerun to read its answer"
    )
    errors = {k: note.format(pid) for k, pid in busy.items()}
    return FetchStats(requested=len(busy), failed=len(busy), errors=errors)


__all__ = ["Requested", "request_missing"]
