"""Run a judge over a benchmark: fetch what is not cached, then build and write the table.

Remote judges go to any OpenAI-compatible endpoint through a `judgelab.judges.clients`
client (`spec.client`: aiohttp, the default, or the openai SDK); the
request loop, its retries and the store-on-arrival cache writes are in `judgelab.judges.loop`,
and `judgelab.judges.workers` spreads it over `spec.workers` processes. The table is
then built from the cache alone (`judgelab.judges.table.build_for`) and written under a lock
(`judgelab.judges.store`); offline baselines (`judgelab.judges.offline`) need no cache.

A run resolves its judge once (`resolve_run`: spec + template or baseline + conditions,
including those already in the judge's table) and hands that `Resolved` to the planner and
the builders; only under the table lock is it resolved again, since another process may
have added conditions meanwhile.

An answer with empty content or `finish_reason="length"` is a real model output: it is cached
and kept as an invalid (or truncated) judgment, not retried. A request that still fails after
its retries is not cached and gets no row; the summary counts it, lists the first errors, and
the next run retries it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Collection
from pathlib import Path

import pandas as pd

from judgelab.errors import JudgeRunError as JudgeRunError
from judgelab.judges import offline
from judgelab.judges import summary as summary_mod
from judgelab.judges import table as table_mod
from judgelab.judges.cache import RequestCache, check_record, opened
from judgelab.judges.loop import FetchStats as FetchStats
from judgelab.judges.loop import backoff_delay as backoff_delay
from judgelab.judges.loop import fetch as fetch
from judgelab.judges.prebuild import Prebuild
from judgelab.judges.references import DERIVED_REFERENCES as DERIVED_REFERENCES
from judgelab.judges.references import with_derived_references
from judgelab.judges.requesting import Requested, held_keys, request_missing
from judgelab.judges.resolved import Resolved
from judgelab.judges.rows import Built
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.store import benchmarks, check_identity, merge_existing, table_lock
from judgelab.judges.store import details_path as details_path
from judgelab.judges.store import existing_conditions as existing_conditions
from judgelab.judges.store import judgments_path as judgments_path
from judgelab.judges.store import write as write
from judgelab.judges.summary import Estimate as Estimate
from judgelab.judges.summary import RunResult as RunResult
from judgelab.judges.summary import Summary as Summary
from judgelab.judges.summary import estimate_tokens as estimate_tokens
from judgelab.judges.summary import summary_json as summary_json


def select(
    items: pd.DataFrame, *, splits: list[str] | None = None, limit: int | None = None
) -> pd.DataFrame:
    """Return the items to request: those of `splits` (all if None), the first `limit`.

    Raises:
        ValueError: an unknown split (the message lists the known ones) or `limit < 1`.
    """
    out = items
    if splits:
        known = sorted(items["split"].astype(str).unique())
        unknown = [s for s in splits if s not in known]
        if unknown:
            raise ValueError(
                f"--split: unknown split(s) {unknown} in benchmark(s) {benchmarks(items)}; "
                f"known: {known}"
            )
        out = out[out["split"].isin(splits)]
    if limit is not None:
        if limit < 1:
            raise ValueError(f"--limit must be at least 1, got {limit}")
        out = out.head(limit)
    return out


def resolve_run(
    items: pd.DataFrame, spec: JudgeSpec, conditions: list[str] | None = None
) -> Resolved:
    """Resolve the judge of a run over `items`: the requested conditions + its table's.

    Raises:
        ValueError: a requested condition the template does not take.
    """
    existing = () if spec.is_offline else existing_conditions(items, spec.judge_id)
    return Resolved.of(spec, conditions, existing=existing)


def _with_references(items: pd.DataFrame, judge: Resolved) -> pd.DataFrame:
    """Return `items` with the derived references the judge's conditions need."""
    if judge.spec.is_offline:
        return items
    spec = judge.spec
    return with_derived_references(items, judge.conditions, seed=spec.seed or 0, model=spec.model)


def with_condition_references(
    items: pd.DataFrame, spec: JudgeSpec, conditions: list[str] | None = None
) -> pd.DataFrame:
    """Return `items` with the derived references the run's conditions need in their meta.

    References an item already carries are kept (a user's own wins). The draw is made over all
    `items`, never over a `--split`/`--limit` selection, so the prompts (and cache keys) of an
    item do not depend on what else was requested. `random` is seeded by the spec's `seed`.
    """
    if spec.is_offline or "meta" not in items.columns:
        return items
    return _with_references(items, resolve_run(items, spec, conditions))


def dry_run(
    items: pd.DataFrame,
    spec: JudgeSpec,
    *,
    splits: list[str] | None = None,
    limit: int | None = None,
    conditions: list[str] | None = None,
    cache: RequestCache | None = None,
    held: Collection[str] | None = None,
) -> Estimate:
    """Count what a run would request and estimate its tokens and cost; call nothing.

    `held`: keys held by submitted batches, which a run does not request (counted apart);
    None reads them from the batch registry, () requests them online too.
    """
    check_identity(items, spec)
    judge = resolve_run(items, spec, conditions)
    items = _with_references(items, judge)
    chosen = select(items, splits=splits, limit=limit)
    if judge.baseline is not None:
        offline.check_benchmark(chosen, judge.baseline)
        return Estimate(0, 0, 0, 0, 0, 0, 0.0)
    p = table_mod.plan_for(chosen, judge)
    by_key = {r.key: r for r in p.requests}
    with opened(cache) as c:
        hits = set(c.get_many(by_key))
    skip = held_keys(spec, held)
    todo = [r for k, r in by_key.items() if k not in hits and k not in skip]
    prompt = sum(estimate_tokens(r.request["messages"]) for r in todo)
    completion = spec.max_tokens * len(todo)
    return Estimate(
        planned=len(p.requests),
        cached=len(p.requests) - sum(1 for r in p.requests if r.key not in hits),
        to_request=len(todo),
        not_applicable=len(p.skipped),
        prompt_tokens=prompt,
        max_completion_tokens=completion,
        cost_usd=table_mod.cost_usd(spec, prompt, completion),
        held=sum(1 for k in by_key if k not in hits and k in skip),
    )


def _build(
    items: pd.DataFrame,
    judge: Resolved,
    cache: RequestCache | None,
    the_plan: table_mod.Plan | None = None,
    prebuilt: Prebuild | None = None,
) -> Built:
    """Build the resolved judge's table over `items` from the cache (offline: no cache).

    `prebuilt`: rows of `the_plan` parsed while the answers arrived; the rest are read now.
    """
    spec = judge.spec
    if judge.baseline is not None:
        return offline.build(
            items,
            name=spec.model,
            options=spec.options,
            judge_id=spec.judge_id,
            conditions=list(judge.conditions),
            orders=spec.orders,
        )
    p = the_plan or table_mod.plan_for(items, judge)
    keys, parsed, records = p.keys, None, None
    if prebuilt is not None and prebuilt.plan is p:  # the same items and conditions
        prebuilt.poll()  # the last answers
        keys, parsed, records = prebuilt.keys_left(), prebuilt.parsed, prebuilt.records
    with opened(cache) as c:
        # Checked on the way out too (issue 19 items 4, 7): an entry stored by an older
        # version with malformed usage or unencodable text is used safely, never fatal.
        stored = c.get_many(keys)
    responses = {k: check_record(v)[0] for k, v in stored.items() if isinstance(v, dict)}
    return table_mod.build_for(items, p, responses, parsed=parsed, records=records)


def build_from_cache(
    items: pd.DataFrame,
    spec: JudgeSpec,
    *,
    conditions: list[str] | None = None,
    cache: RequestCache | None = None,
    the_plan: table_mod.Plan | None = None,
) -> Built:
    """Build the judge's table over all `items` from whatever the cache holds (no calls).

    `the_plan`: the plan of exactly these items and conditions, if computed already.
    """
    judge = resolve_run(items, spec, conditions)
    return _build(_with_references(items, judge), judge, cache, the_plan)


def _summarize(
    spec: JudgeSpec,
    items: pd.DataFrame,
    chosen: pd.DataFrame,
    built: Built,
    asked: Requested,
    written: list[Path],
    t0: float,
) -> Summary:
    """Return the run's summary (offline: rows of the selection count as planned)."""
    j, details, stats = built.judgments, built.details, asked.stats
    chosen_keys = set(zip(chosen["split"].astype(str), chosen["item_id"].astype(str), strict=True))
    in_sel = [(s, i) in chosen_keys for s, i in zip(j["split"], j["item_id"], strict=True)]
    not_applicable = int((details["status"] == "not_applicable").sum())
    return summary_mod.from_request(
        spec,
        asked,
        written,
        t0,
        benchmark=",".join(benchmarks(items)),
        planned=asked.planned if not spec.is_offline else int(sum(in_sel)),
        not_applicable=asked.skipped if not spec.is_offline else not_applicable,
        rows=len(j),
        invalid=int((~j["valid"].astype(bool)).sum()),
        pending=int((details["status"] == "pending").sum()),
        cost_usd=None if (spec.price_in is None and not spec.is_offline) else stats.cost_usd,
    )


def run(
    items: pd.DataFrame,
    spec: JudgeSpec,
    *,
    splits: list[str] | None = None,
    limit: int | None = None,
    conditions: list[str] | None = None,
    cache: RequestCache | None = None,
    progress: bool = True,
    write_tables: bool = True,
    evict_invalid: bool = False,
    held: Collection[str] | None = None,
) -> RunResult:
    """Judge `items` with `spec`: request what is missing, then build and write the table.

    Only the selected items (`splits`, `limit`) are requested; the table is rebuilt over all
    `items` from the cache and merged into the judge's existing table (rows it lacks, such as
    another order, are kept), so a partial run never shrinks a table built earlier. A spec
    whose model or template differs from the one that wrote the judge's table is refused.

    Args:
        items: An items table (one benchmark, or several: one table file each).
        spec: The judge.
        splits: Only request items of these splits.
        limit: Only request the first `limit` selected items.
        conditions: Conditions to run (default: the spec's, else the template's); conditions
            already in the judge's table are kept in the rebuilt table.
        cache: The request cache (default: `paths.cache()/requests.sqlite`).
        progress: Show the progress bar.
        write_tables: Write the tables under `paths.judgments()`.
        evict_invalid: Evict the selection's cached answers flagged invalid (malformed
            usage, unencodable text, unreadable entry) first, so they are requested again.
        held: Keys held by submitted batches not collected yet: not requested, counted in
            the summary (their answers come by batch). None (default) reads them from the
            batch registry (`batch_registry.Registry.held_keys`); () requests them online.
    """
    t0 = time.monotonic()
    if write_tables:
        check_identity(items, spec)  # before any request: a refused run pays nothing
    judge = resolve_run(items, spec, conditions)
    items = _with_references(items, judge)
    chosen = select(items, splits=splits, limit=limit)
    # Everything that can reject the input (conditions, templates) runs before the cache is
    # opened, so a bad argument leaves no file behind; an offline baseline opens no cache.
    p = None
    if judge.baseline is not None:
        offline.check_benchmark(chosen, judge.baseline)
    else:
        p = table_mod.plan_for(chosen, judge)
    context = opened(cache) if p is not None else contextlib.nullcontext(cache)
    with context as c, contextlib.ExitStack() as done:
        if p is not None:
            skip = held_keys(spec, held)
            asked = request_missing(p, c, spec, progress, evict_invalid, chosen, skip)
        else:
            asked = Requested()
        if asked.prebuilt is not None:
            done.callback(asked.prebuilt.close)
        # Build and write under the table's lock: a second process judging other splits of
        # the same judge then rebuilds from a cache that already holds this one's answers,
        # instead of replacing the table with a copy that lacks them.
        lock = table_lock(items, spec.judge_id) if write_tables else contextlib.nullcontext()
        with lock:
            # Another process may have added conditions to the table meanwhile: resolve again.
            now = resolve_run(items, spec, conditions)
            # The selection's plan is the table's when it covers every item and the table's
            # conditions did not change.
            whole = p if len(chosen) == len(items) and now.conditions == judge.conditions else None
            built = _build(_with_references(items, now), now, c, whole, asked.prebuilt)
            if write_tables:
                check_identity(items, spec)  # another process may have written it meanwhile
                built = merge_existing(built, items, spec.judge_id)
            written = write(built, spec.judge_id) if write_tables and len(built.judgments) else []
    summary = _summarize(spec, items, chosen, built, asked, written, t0)
    return RunResult(built.judgments, built.details, summary, written)


__all__ = [
    "Estimate",
    "FetchStats",
    "JudgeRunError",
    "RunResult",
    "Summary",
    "build_from_cache",
    "details_path",
    "dry_run",
    "estimate_tokens",
    "fetch",
    "held_keys",
    "judgments_path",
    "resolve_run",
    "run",
    "select",
    "with_condition_references",
    "write",
]
