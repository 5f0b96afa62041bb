"""Run a judge over a benchmark: fetch what is not cached, then build and write the table.

Remote judges go to any OpenAI-compatible endpoint through a `judgelab.judges.clients`
client (`spec.client`: aiohttp, the default, or the openai SDK):

- bounded concurrency (`spec.concurrency` workers over one keep-alive pool) and a total
  per-request timeout (`spec.timeout_s`, enforced around the whole call);
- retries are ours (the clients never retry on their own, so every retry is counted): up to
  `spec.max_retries` on 429, 408/409, 5xx, timeouts, connection errors and malformed answers
  (invalid JSON, no choices), waiting `Retry-After` / `retry-after-ms` when the server sends
  it, else `backoff_s * 2**attempt` times a jitter in [0.5, 1.5) (capped at 60 s). Other
  4xx errors fail at once; 401/403 stop the whole run (the key is wrong for every request);
- every response is stored in the SQLite request cache the moment it arrives, before any
  parsing, so a run killed at any moment resumes by paying only for what was never stored;
- the table is then built from the cache alone (`judgelab.judges.table.build`).

An answer with empty content or `finish_reason="length"` is a real model output: it is cached
and kept as an invalid (or truncated) judgment, not retried. A request that still fails after
its retries is not cached and gets no row; the summary counts it, lists the first errors, and
the next run retries it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.core import paths, tables
from judgelab.errors import JudgeRunError as JudgeRunError
from judgelab.judges import clients, offline, templates
from judgelab.judges import table as table_mod
from judgelab.judges.cache import RequestCache
from judgelab.judges.references import reference_for_condition
from judgelab.judges.spec import JudgeSpec

MAX_BACKOFF_S = 60.0
MAX_RETRY_AFTER_S = 300.0


@dataclass
class FetchStats:
    """Counters of one fetch: what was asked, answered, retried and failed."""

    requested: int = 0
    answered: int = 0
    failed: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    retry_reasons: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


@dataclass
class Summary:
    """What a run did; `format()` is the text printed at the end of `judgelab judge`."""

    judge: str
    benchmark: str
    planned: int
    cache_hits: int
    requested: int
    answered: int
    failed: int
    retries: int
    not_applicable: int
    rows: int
    invalid: int
    pending: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    wall_s: float
    request_s: float = 0.0
    retry_reasons: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    path: str | None = None

    def format(self) -> str:
        """Return a human-readable multi-line summary."""
        cost = "unknown (no prices in spec)" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        reasons = ", ".join(f"{k}={v}" for k, v in sorted(self.retry_reasons.items()))
        lines = [
            f"judge {self.judge} on {self.benchmark}",
            f"  requests planned   {self.planned}",
            f"  cache hits         {self.cache_hits}",
            f"  requests made      {self.requested} ({self.answered} answered, "
            f"{self.failed} failed)",
            f"  retries            {self.retries}" + (f" ({reasons})" if reasons else ""),
            f"  not applicable     {self.not_applicable} (item, condition) pairs",
            f"  judgment rows      {self.rows} ({self.invalid} invalid verdicts, raw output "
            f"kept; {self.pending} pending)",
            f"  tokens (new calls) {self.prompt_tokens} prompt + {self.completion_tokens} "
            "completion",
            f"  cost (new calls)   {cost}",
            f"  wall time          {self.wall_s:.1f} s ({self.request_s:.1f} s of requests)",
        ]
        if self.path:
            lines.append(f"  table              {self.path}")
        for key, err in list(self.errors.items())[:5]:
            lines.append(f"  FAILED {key[:12]}: {err}")
        if self.failed:
            lines.append(
                f"  {self.failed} request(s) failed; rerun the same command to retry them"
            )
        return "\n".join(lines)


def backoff_delay(attempt: int, base_s: float, rng: random.Random) -> float:
    """Return the exponential backoff with jitter for retry number `attempt` (0-based).

    >>> 0.5 <= backoff_delay(0, 1.0, random.Random(0)) < 1.5
    True
    """
    return min(MAX_BACKOFF_S, base_s * (2**attempt)) * rng.uniform(0.5, 1.5)


def _scrub(text: str, secret: str | None) -> str:
    if secret and secret != "EMPTY" and len(secret) >= 4:
        text = text.replace(secret, "***")
    return text


async def _call(client: clients.ChatClient, payload: dict[str, Any], spec: JudgeSpec) -> dict:
    """Make one chat request; return the record to cache or raise a `clients` error."""
    t0 = time.monotonic()
    try:
        async with asyncio.timeout(spec.timeout_s):  # no extra task per call, as wait_for has
            resp = await client.complete(payload)
    except TimeoutError:
        raise clients.RetryableError("timeout", f"no answer within {spec.timeout_s:g} s") from None
    latency = time.monotonic() - t0
    # Only these fields are kept: the decoded JSON is read as is, never through SDK models.
    if not isinstance(resp, dict):
        msg = f"response is a {type(resp).__name__}, not a JSON object"
        raise clients.RetryableError("malformed", msg)
    choices = resp.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise clients.RetryableError("malformed", "response has no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    usage = resp.get("usage") if isinstance(resp.get("usage"), dict) else {}
    return {
        "content": message.get("content"),
        "finish_reason": choice.get("finish_reason"),
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "latency_s": round(latency, 6),
        "response_model": resp.get("model"),
        "response_id": resp.get("id"),
        "created_at": datetime.now(UTC).isoformat(),
    }


class _GroupCommit:
    """Store answers in the cache, one transaction for all that arrive in one loop turn.

    A worker awaits its answer's commit before it takes the next request, so a kill loses at
    most the one answer per worker that was not yet stored; but answers that arrive together
    share a transaction, which costs a fraction of one commit per answer. (A writer thread was
    measured slower: it contends with the event loop for the GIL.)
    """

    def __init__(self, cache: RequestCache):
        self.cache = cache
        self.pending: list[tuple[str, dict[str, Any], dict[str, Any], asyncio.Future[None]]] = []

    async def put(self, key: str, request: dict[str, Any], record: dict[str, Any]) -> None:
        """Queue one answer, commit it with the others of this loop turn, then return."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        if not self.pending:
            loop.call_soon(self._flush)
        self.pending.append((key, request, record, done))
        await done

    def _flush(self) -> None:
        batch, self.pending = self.pending, []
        try:
            self.cache.put_many([(k, q, r) for k, q, r, _ in batch])
        except BaseException as exc:  # e.g. disk full: every waiting worker sees it
            for *_, done in batch:
                if not done.done():
                    done.set_exception(exc)
            return
        for *_, done in batch:
            if not done.done():
                done.set_result(None)


async def fetch(
    spec: JudgeSpec,
    todo: list[table_mod.Planned],
    cache: RequestCache,
    *,
    cached: int = 0,
    progress: bool = True,
    seed: int | None = None,
) -> FetchStats:
    """Request every planned call in `todo` and store each answer in `cache` on arrival.

    Args:
        spec: A remote judge spec.
        todo: Planned requests that are not cached yet (distinct keys).
        cache: The request cache answers are written to.
        cached: How many planned requests were cache hits (shown in the progress bar).
        progress: Show a tqdm progress bar on stderr.
        seed: Seed of the backoff jitter (None: random).

    Raises:
        JudgeRunError: the endpoint rejected the key (401/403); answers so far are cached.
    """
    from tqdm.auto import tqdm

    stats = FetchStats(requested=len(todo))
    if not todo:
        return stats
    store = _GroupCommit(cache)
    api_key = spec.api_key()
    rng = random.Random(seed)
    queue: asyncio.Queue[table_mod.Planned] = asyncio.Queue()
    for p in todo:
        queue.put_nowait(p)
    bar = tqdm(
        total=len(todo),
        unit="req",
        desc=spec.judge_id[:40],
        disable=not progress,
        file=sys.stderr,
        dynamic_ncols=True,
        mininterval=0.5,
    )
    fatal: list[str] = []

    def postfix() -> None:
        bar.set_postfix(cached=cached, failed=stats.failed, retries=stats.retries, refresh=False)

    postfix()

    async def worker(client: Any) -> None:
        while not fatal:
            try:
                p = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            attempt = 0
            while True:
                try:
                    record = await _call(client, p.payload(), spec)
                except clients.RetryableError as exc:
                    if attempt >= spec.max_retries:
                        stats.failed += 1
                        msg = f"{exc} (gave up after {attempt} retries)"
                        stats.errors[p.key] = _scrub(msg, api_key)
                        postfix()
                        break
                    stats.retries += 1
                    stats.retry_reasons[exc.reason] = stats.retry_reasons.get(exc.reason, 0) + 1
                    wait = exc.wait_s
                    if wait is None:
                        wait = backoff_delay(attempt, spec.backoff_s, rng)
                    await asyncio.sleep(min(wait, MAX_RETRY_AFTER_S))
                    attempt += 1
                    postfix()
                    continue
                except clients.FatalError as exc:
                    fatal.append(_scrub(str(exc), api_key))
                    return
                except Exception as exc:  # non-retryable HTTP errors, unexpected bugs
                    stats.failed += 1
                    stats.errors[p.key] = _scrub(f"{type(exc).__name__}: {exc}", api_key)
                    postfix()
                    break
                await store.put(p.key, p.request, record)
                stats.answered += 1
                stats.prompt_tokens += int(record["prompt_tokens"] or 0)
                stats.completion_tokens += int(record["completion_tokens"] or 0)
                cost = table_mod.cost_usd(
                    spec, record["prompt_tokens"], record["completion_tokens"]
                )
                stats.cost_usd += cost or 0.0
                break
            bar.update(1)  # the postfix changes only on a retry or a failure

    try:
        async with clients.open_client(
            spec.client,
            spec.base_url,
            api_key,
            timeout_s=spec.timeout_s,
            concurrency=spec.concurrency,
        ) as client:
            await asyncio.gather(*(worker(client) for _ in range(spec.concurrency)))
    finally:
        bar.close()
    if fatal:
        raise JudgeRunError(
            f"the endpoint {spec.endpoint_id} refused the request: {fatal[0]}. Check the key in "
            f"${spec.api_key_env}; {stats.answered} answers were cached before stopping"
        )
    return stats


def _run_coroutine(coro: Any) -> Any:
    """Run `coro` to completion, also where an event loop already runs (a Jupyter kernel).

    `asyncio.run` refuses to start inside a running loop, so there the coroutine gets its
    own loop in a worker thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="judgelab-run") as pool:
        return pool.submit(asyncio.run, coro).result()


@dataclass
class RunResult:
    """What `run` produced: the table, its diagnostics, the summary and where it was written."""

    judgments: pd.DataFrame
    details: pd.DataFrame
    summary: Summary
    paths: list[Path]


def judgments_path(benchmark: str, judge_id: str) -> Path:
    """Return `paths.judgments()/<benchmark>/<judge>.parquet`."""
    return paths.judgments() / benchmark / f"{judge_id}.parquet"


def details_path(benchmark: str, judge_id: str) -> Path:
    """Return `paths.judgments()/<benchmark>/details/<judge>.parquet` (diagnostics)."""
    return paths.judgments() / benchmark / "details" / f"{judge_id}.parquet"


def existing_conditions(items: pd.DataFrame, judge_id: str) -> list[str]:
    """Return the conditions already present in this judge's tables for these benchmarks."""
    found: list[str] = []
    for bench in sorted(items["benchmark"].astype(str).unique()):
        p = judgments_path(bench, judge_id)
        if p.exists():
            with contextlib.suppress(Exception):
                conds = tables.read(p, "judgments", columns=["condition"])["condition"]
                found += [c for c in conds.astype(str).unique() if "candidate=" not in c]
    return list(dict.fromkeys(found))


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
            benchmarks = sorted(items["benchmark"].astype(str).unique())
            raise ValueError(
                f"--split: unknown split(s) {unknown} in benchmark(s) {benchmarks}; known: {known}"
            )
        out = out[out["split"].isin(splits)]
    if limit is not None:
        if limit < 1:
            raise ValueError(f"--limit must be at least 1, got {limit}")
        out = out.head(limit)
    return out


def _conditions(items: pd.DataFrame, spec: JudgeSpec, conditions: list[str] | None) -> list[str]:
    if spec.is_offline:
        return list(conditions or spec.conditions or offline.BASELINES[spec.model].conditions)
    template = templates.get(str(spec.template))
    requested = table_mod.conditions_for(spec, template, conditions)
    for c in existing_conditions(items, spec.judge_id):
        with contextlib.suppress(ValueError):
            template.check_condition(c)
            if c not in requested:
                requested.append(c)
    return requested


@dataclass
class Estimate:
    """What a run would do (`--dry-run`); token counts are estimates, cost an upper bound."""

    planned: int
    cached: int
    to_request: int
    not_applicable: int
    prompt_tokens: int
    max_completion_tokens: int
    cost_usd: float | None

    def as_row(self) -> dict[str, Any]:
        """Return the estimate as table columns (cost NaN when the spec has no prices)."""
        return {
            "planned": self.planned,
            "cached": self.cached,
            "to_request": self.to_request,
            "not_applicable": self.not_applicable,
            "est_prompt_tokens": self.prompt_tokens,
            "max_completion_tokens": self.max_completion_tokens,
            "est_cost_usd": math.nan if self.cost_usd is None else self.cost_usd,
        }

    def format(self) -> str:
        """Return the dry-run report."""
        cost = (
            "unknown (no prices in spec)"
            if self.cost_usd is None
            else f"<= ${self.cost_usd:.4f} (prompt estimate + max_tokens per request)"
        )
        return "\n".join(
            [
                f"requests planned        {self.planned}",
                f"already cached          {self.cached}",
                f"to request              {self.to_request}",
                f"not applicable          {self.not_applicable} (item, condition) pairs",
                f"est. prompt tokens      {self.prompt_tokens} (uncached; ~4 chars/token)",
                f"max completion tokens   {self.max_completion_tokens} (uncached x max_tokens)",
                f"est. cost               {cost}",
            ]
        )


def estimate_tokens(messages: list[dict[str, str]]) -> int:
    """Estimate the prompt tokens of a chat request: ceil(chars / 4) + 4 per message + 3.

    The 4-characters-per-token rule is OpenAI's rule of thumb for English text; the per-message
    and per-reply overheads follow OpenAI's chat-format accounting. It needs no tokenizer.

    >>> estimate_tokens([{"role": "user", "content": "x" * 400}])  # 100 + 4 + 3
    107
    """
    chars = sum(len(m.get("content") or "") for m in messages)
    return math.ceil(chars / 4) + 4 * len(messages) + 3


def dry_run(
    items: pd.DataFrame,
    spec: JudgeSpec,
    *,
    splits: list[str] | None = None,
    limit: int | None = None,
    conditions: list[str] | None = None,
    cache: RequestCache | None = None,
) -> Estimate:
    """Count what a run would request and estimate its tokens and cost; call nothing."""
    items = with_condition_references(items, spec, conditions)
    chosen = select(items, splits=splits, limit=limit)
    if spec.is_offline:
        offline.check_benchmark(chosen, offline.BASELINES[spec.model])
        return Estimate(0, 0, 0, 0, 0, 0, 0.0)
    p = table_mod.plan(chosen, spec, conditions=_conditions(items, spec, conditions))
    by_key = {r.key: r for r in p.requests}
    own = cache is None
    cache = cache or RequestCache()
    try:
        hits = set(cache.get_many(by_key))
    finally:
        if own:
            cache.close()
    todo = [r for k, r in by_key.items() if k not in hits]
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
    )


#: Reference conditions whose text the runner derives from the items (spec 001 §3.3) when an
#: item does not carry it in `meta["references"]` already: `random` (another question's
#: reference, seeded) and `self` (the judge model's own answer, matched on
#: `meta["candidate_model"] == spec.model`).
DERIVED_REFERENCES = ("random", "self")


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
    wanted = [
        c.split("=", 1)[1]
        for c in _conditions(items, spec, conditions)
        if c.startswith("reference=") and c.split("=", 1)[1] in DERIVED_REFERENCES
    ]
    if not wanted:
        return items
    metas = [json.loads(m) if isinstance(m, str) and m else {} for m in items["meta"]]
    for name in wanted:
        refs = reference_for_condition(items, name, seed=spec.seed or 0, self_model=spec.model)
        for meta, ref in zip(metas, refs.astype(object), strict=True):
            have = meta.setdefault("references", {})
            if isinstance(have, dict) and name not in have and isinstance(ref, str):
                have[name] = ref
    out = items.copy()
    out["meta"] = [json.dumps(m, sort_keys=True, ensure_ascii=False) for m in metas]
    return out


def build_from_cache(
    items: pd.DataFrame,
    spec: JudgeSpec,
    *,
    conditions: list[str] | None = None,
    cache: RequestCache | None = None,
    the_plan: table_mod.Plan | None = None,
) -> table_mod.Built:
    """Build the judge's table over all `items` from whatever the cache holds (no calls).

    `the_plan`: the plan of exactly these items and conditions, if computed already.
    """
    items = with_condition_references(items, spec, conditions)
    if spec.is_offline:
        rows, details = offline.build(
            items,
            name=spec.model,
            options=spec.options,
            judge_id=spec.judge_id,
            conditions=list(conditions or spec.conditions or []) or None,
            orders=spec.orders,
        )
        return table_mod.Built(
            table_mod.to_table(rows), pd.DataFrame(details, columns=table_mod.DETAIL_COLUMNS)
        )
    p = the_plan or table_mod.plan(items, spec, conditions=_conditions(items, spec, conditions))
    own = cache is None
    cache = cache or RequestCache()
    try:
        responses = cache.get_many(p.keys)
    finally:
        if own:
            cache.close()
    return table_mod.build(items, spec, responses, the_plan=p)


@contextlib.contextmanager
def _table_lock(items: pd.DataFrame, judge_id: str) -> Iterator[None]:
    """Hold an exclusive lock on this judge's table of every benchmark in `items`."""
    with contextlib.ExitStack() as stack:
        for bench in sorted(items["benchmark"].astype(str).unique()):
            path = judgments_path(bench, judge_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            fh = stack.enter_context(open(path.with_name(f".{path.name}.lock"), "a"))
            try:
                import fcntl
            except ImportError:  # pragma: no cover - not POSIX: no inter-process lock
                continue
            fcntl.flock(fh, fcntl.LOCK_EX)
            stack.callback(fcntl.flock, fh, fcntl.LOCK_UN)
        yield


def write(built: table_mod.Built, judge_id: str) -> list[Path]:
    """Write one judgments table (and its details) per benchmark, atomically."""
    written = []
    benchmarks = sorted(set(built.judgments["benchmark"].astype(str)))
    for bench in benchmarks:
        part = built.judgments[built.judgments["benchmark"] == bench].reset_index(drop=True)
        written.append(tables.write_judgments(part, judgments_path(bench, judge_id)))
        det = built.details[built.details["benchmark"] == bench].reset_index(drop=True)
        with tables.atomic_path(details_path(bench, judge_id)) as tmp:
            det.to_parquet(tmp, index=False)
    return written


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
) -> RunResult:
    """Judge `items` with `spec`: request what is missing, then build and write the table.

    Only the selected items (`splits`, `limit`) are requested; the table is rebuilt over all
    `items` from the cache, so a partial run never shrinks a table built earlier.

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
    """
    t0 = time.monotonic()
    benchmark = ",".join(sorted(items["benchmark"].astype(str).unique()))
    items = with_condition_references(items, spec, conditions)
    chosen = select(items, splits=splits, limit=limit)
    stats = FetchStats()
    # Everything that can reject the input (conditions, templates) runs before the cache is
    # opened, so a bad argument leaves no file behind.
    p = None
    if spec.is_offline:
        offline.check_benchmark(chosen, offline.BASELINES[spec.model])
    else:
        conds = _conditions(items, spec, conditions)
        p = table_mod.plan(chosen, spec, conditions=conds)
    own = cache is None and not spec.is_offline
    if own:
        cache = RequestCache()
    try:
        hits = 0
        request_s = 0.0
        n_planned = 0
        skipped = 0
        if p is not None:
            assert cache is not None
            n_planned, skipped = len(p.requests), len(p.skipped)
            have = cache.present(p.keys)
            hits = sum(1 for r in p.requests if r.key in have)
            todo = list({r.key: r for r in p.requests if r.key not in have}.values())
            t_req = time.monotonic()
            stats = _run_coroutine(fetch(spec, todo, cache, cached=hits, progress=progress))
            request_s = time.monotonic() - t_req
        # Build and write under the table's lock: a second process judging other splits of
        # the same judge then rebuilds from a cache that already holds this one's answers,
        # instead of replacing the table with a copy that lacks them.
        lock = _table_lock(items, spec.judge_id) if write_tables else contextlib.nullcontext()
        with lock:
            # The selection's plan is the table's when it covers every item and the table's
            # conditions did not change meanwhile (another process may have added some).
            whole = None
            if p is not None and len(chosen) == len(items):
                whole = p if _conditions(items, spec, conditions) == conds else None
            built = build_from_cache(
                items, spec, conditions=conditions, cache=cache, the_plan=whole
            )
            written = write(built, spec.judge_id) if write_tables and len(built.judgments) else []
    finally:
        if own and cache is not None:
            cache.close()
    j = built.judgments
    chosen_keys = set(zip(chosen["split"].astype(str), chosen["item_id"].astype(str), strict=True))
    in_sel = [(s, i) in chosen_keys for s, i in zip(j["split"], j["item_id"], strict=True)]
    summary = Summary(
        judge=spec.judge_id,
        benchmark=benchmark,
        planned=n_planned if not spec.is_offline else int(sum(in_sel)),
        cache_hits=hits,
        requested=stats.requested,
        answered=stats.answered,
        failed=stats.failed,
        retries=stats.retries,
        not_applicable=skipped
        if not spec.is_offline
        else int((built.details["status"] == "not_applicable").sum()),
        rows=len(j),
        invalid=int((~j["valid"].astype(bool)).sum()),
        pending=int((built.details["status"] == "pending").sum()),
        prompt_tokens=stats.prompt_tokens,
        completion_tokens=stats.completion_tokens,
        cost_usd=None if (spec.price_in is None and not spec.is_offline) else stats.cost_usd,
        wall_s=time.monotonic() - t0,
        request_s=request_s,
        retry_reasons=stats.retry_reasons,
        errors=stats.errors,
        path=", ".join(map(str, written)) or None,
    )
    return RunResult(j, built.details, summary, written)


def summary_json(summary: Summary) -> str:
    """Return the summary as JSON (for logs and notebooks)."""
    return json.dumps(summary.__dict__, sort_keys=True, default=str)


__all__ = [
    "Estimate",
    "FetchStats",
    "JudgeRunError",
    "RunResult",
    "Summary",
    "build_from_cache",
    "with_condition_references",
    "details_path",
    "dry_run",
    "estimate_tokens",
    "fetch",
    "judgments_path",
    "run",
    "select",
    "write",
]
