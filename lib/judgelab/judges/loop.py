"""The request loop: ask an endpoint for every uncached request, store each answer on arrival.

- bounded concurrency (`spec.concurrency` workers over one keep-alive pool) and a total
  per-request timeout (`spec.timeout_s`, enforced around the whole call);
- retries are ours (the clients never retry on their own, so every retry is counted): up to
  `spec.max_retries` on 429, 408/409, 5xx, timeouts, connection errors and malformed answers
  (invalid JSON, no choices), waiting `Retry-After` / `retry-after-ms` when the server sends
  it (at most `spec.max_retry_after_s`, 60 s by default), else `backoff_s * 2**attempt` times
  a jitter in [0.5, 1.5) (capped at 60 s); a wait of 5 s or more is announced on stderr.
  With `spec.deadline_s`, no request starts and no wait ends past the deadline: what is left
  fails (the next run requests it). Other 4xx errors fail at once; 401/403 stop the whole
  run (the key is wrong for every request);
- every response is stored in the SQLite request cache the moment it arrives, before any
  parsing (`_GroupCommit`: one transaction per loop turn), so a run killed at any moment
  resumes by paying only for what was never stored;
- an answer is checked before it is stored (`cache.check_record`): malformed token usage is
  recorded as unknown, text UTF-8 cannot encode (a lone surrogate) is replaced and kept
  escaped; both are flagged and counted, never fatal. An answer over
  `spec.max_response_bytes` fails (counted, not cached). An answer that cannot be stored
  fails alone; a cache that cannot be written at all (disk full) stops the run with that
  reason, keeping every answer committed before.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import random
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from judgelab.core import secrets
from judgelab.errors import JudgeRunError
from judgelab.judges import answers, clients
from judgelab.judges.cache import RequestCache, request_texts, storage_problem
from judgelab.judges.eventloop import loop_factory as loop_factory
from judgelab.judges.eventloop import run_coroutine as run_coroutine
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.table import Planned, cost_usd

MAX_BACKOFF_S = 60.0
MAX_RETRY_AFTER_S = 300.0  # the hard ceiling; `spec.max_retry_after_s` (60 s) is the usual cap
NOTICE_WAIT_S = 5.0  # a retry wait at least this long is announced on stderr


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
    flagged: dict[str, str] = field(default_factory=dict)


def backoff_delay(attempt: int, base_s: float, rng: random.Random) -> float:
    """Return the exponential backoff with jitter for retry number `attempt` (0-based).

    >>> 0.5 <= backoff_delay(0, 1.0, random.Random(0)) < 1.5
    True
    """
    return min(MAX_BACKOFF_S, base_s * (2**attempt)) * rng.uniform(0.5, 1.5)


def _scrub(text: str, secret: str | None) -> str:
    """Mask the run's key and every secret-shaped value (one detector: `core.secrets`)."""
    return secrets.scrub(text, [secret] if secret and secret != "EMPTY" else [])


async def _call(
    client: clients.ChatClient, payload: dict[str, Any], spec: JudgeSpec, body: bytes | None = None
) -> dict:
    """Make one chat request; return the record to cache or raise a `clients` error."""
    t0 = time.monotonic()
    try:
        if getattr(client, "bounds_whole_call", False):  # its own total timeout: no 2nd timer
            resp = await client.complete(payload, body)
        else:
            async with asyncio.timeout(spec.timeout_s):  # no extra task, as wait_for has
                resp = await client.complete(payload, body)
    except TimeoutError:
        raise clients.RetryableError("timeout", f"no answer within {spec.timeout_s:g} s") from None
    latency = time.monotonic() - t0
    # Only these fields are kept: the decoded JSON is read as is, never through SDK models.
    record = answers.record_from_completion(
        resp,
        spec.max_response_bytes,
        latency_s=round(latency, 6),
        created_at=datetime.now(UTC).isoformat(),
    )
    if isinstance(record, dict):
        return record
    if record.startswith(answers.TOO_LARGE):
        raise clients.RequestError(
            f"{record} (not cached; raise max_response_bytes in the spec to accept such answers)"
        )
    raise clients.RetryableError("malformed", record)


def progress_bar(spec: JudgeSpec, total: int, progress: bool) -> Any:
    """Return the run's tqdm bar on stderr (disabled when `progress` is False)."""
    from tqdm.auto import tqdm  # lazy: keeps `import judgelab.judges` light

    return tqdm(
        total=total,
        unit="req",
        desc=spec.judge_id[:40],
        disable=not progress,
        file=sys.stderr,
        dynamic_ncols=True,
        mininterval=0.5,
    )


class _GroupCommit:
    """Store answers in the cache, one transaction for all that arrived meanwhile.

    An answer is committed in the loop turn after it arrived, together with every answer
    that arrived in the same turn (a fraction of one commit per answer). A worker sends its
    next request before that commit completes (`submit` returns the commit's future) and
    waits for it only when the next answer is in: the commit runs while the request is on
    the wire instead of delaying it. So a kill loses at most two answers per worker (one in
    flight, one being committed; 24-26 at concurrency 24 in the soak, where waiting for each
    commit lost at most 24), and 20,000 requests at concurrency 256 took 4.9 s instead of
    5.45 s (issue 38, `bench/scale_runner.py`, 2 workers). The commit runs on the loop: a
    writer thread bought nothing, in issue 32 (25.6 vs 26.0 s, 5 % more CPU per request)
    and again in issue 38 (ratio to the bare client 1.352 vs 1.356, medians of 3, 5 % more
    CPU).
    """

    def __init__(self, cache: RequestCache):
        self.cache = cache
        self.pending: list[tuple[str, Any, dict[str, Any], asyncio.Future[None]]] = []
        self.writer: asyncio.Task[None] | None = None
        #: Set when a commit failed for want of storage: no request should be sent any more.
        self.unwritable = False

    def submit(
        self, key: str, request: dict[str, Any] | str, record: dict[str, Any]
    ) -> asyncio.Future[None]:
        """Queue one answer; return the future of its commit (its error: not stored)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self.pending.append((key, request, record, done))
        if self.writer is None:
            self.writer = loop.create_task(self._drain())
        return done

    async def _drain(self) -> None:
        try:
            while self.pending:
                await asyncio.sleep(0)  # the answers of this loop turn join the transaction
                batch, self.pending = self.pending, []
                outcomes = self._commit(batch)
                for (*_, done), outcome in zip(batch, outcomes, strict=True):
                    if done.done():
                        continue
                    if outcome is None:
                        done.set_result(None)
                    else:
                        done.set_exception(outcome)
        finally:
            self.writer = None

    def _commit(self, batch: list[Any]) -> list[BaseException | None]:
        """Commit `batch`; return each entry's error (None: stored)."""
        try:
            rows = self.cache.encode([(k, q, r) for k, q, r, _ in batch])
            self.cache.write_rows(rows)
        except (sqlite3.OperationalError, OSError) as exc:  # disk full: every waiter sees it
            self.unwritable = True
            return [exc] * len(batch)
        except Exception:
            # One bad answer must not cost the others: store them one by one, so each
            # waiter sees only its own error.
            out: list[BaseException | None] = []
            for k, q, r, _ in batch:
                try:
                    self.cache.put(k, q, r)
                except Exception as exc:
                    out.append(exc)
                else:
                    out.append(None)
            return out
        return [None] * len(batch)


class _Fetch:
    """One fetch's shared state: the queue, the counters, the store and the progress bar."""

    def __init__(
        self,
        spec: JudgeSpec,
        todo: list[Planned],
        cache: RequestCache,
        stats: FetchStats,
        *,
        cached: int,
        progress: bool,
        seed: int | None,
        tick: Any = None,
    ):
        self.spec, self.stats, self.cached, self.tick = spec, stats, cached, tick
        self.store = _GroupCommit(cache)
        self.api_key: str | None = None  # read with the first request (`client`)
        self._client: Any = None
        self._opening = asyncio.Lock()
        self.exits = contextlib.AsyncExitStack()
        self.rng = random.Random(seed)
        self.queue: asyncio.Queue[Planned] = asyncio.Queue()
        for p in todo:
            self.queue.put_nowait(p)
        self.bar = progress_bar(spec, len(todo), progress)
        self.fatal: list[str] = []
        #: Commits of answers not settled yet (`_settled`).
        self.committing: set[asyncio.Future[None]] = set()
        self.storage: list[str] = []
        # issue 19 item 9: an optional run deadline, and a line for each long wait
        self.deadline = time.monotonic() + spec.deadline_s if spec.deadline_s else None
        self.noticed_at = -math.inf
        self.postfix()

    def postfix(self) -> None:
        """Show the cache hits, failures and retries beside the bar."""
        s = self.stats
        self.bar.set_postfix(cached=self.cached, failed=s.failed, retries=s.retries, refresh=False)

    async def client(self) -> Any:
        """Return the HTTP client, opened (and the key read) when the first request needs it.

        A run whose every request is cached then opens no connection and needs no key.
        """
        async with self._opening:
            if self._client is None:
                self.api_key = self.spec.api_key()
                self._client = await self.exits.enter_async_context(
                    clients.open_client(
                        self.spec.client,
                        self.spec.base_url,
                        self.api_key,
                        timeout_s=self.spec.timeout_s,
                        concurrency=self.spec.concurrency,
                        max_response_bytes=self.spec.max_response_bytes,
                        connect_timeout_s=self.spec.connect_timeout_s,
                    )
                )
        return self._client

    async def worker(self) -> None:
        """Take requests off the queue until it is empty or the run must stop.

        An answer is counted when its commit completes (`_settled`), while this worker has
        gone on to its next request (`_GroupCommit`); the next answer waits for that commit,
        so a worker holds at most one answer not stored and one request in flight.
        """
        prior: asyncio.Future[None] | None = None  # the commit of this worker's last answer
        while not (self.fatal or self.storage or self.store.unwritable):
            try:
                p = self.queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if self._past(0.0):  # the run deadline passed: what is left is not requested
                self._failed(p, f"not requested: {self._deadline_note()}")
                continue
            client = self._client or await self.client()
            got = await self._answer(client, p)
            if prior is not None and not prior.done():
                await asyncio.wait([prior])
            prior = None
            if got is False:  # fatal: the endpoint refused the key
                return
            if got is None:  # given up (counted)
                self._done_with()
                continue
            text, record = got
            done = self.store.submit(p.key, text, record)
            self.committing.add(done)
            done.add_done_callback(functools.partial(self._settled, p, record))
            prior = done

    async def settle(self) -> None:
        """Wait until every answer handed to the store is committed (or failed) and counted."""
        while self.committing:
            await asyncio.wait(list(self.committing))

    def _settled(self, p: Planned, record: dict[str, Any], done: asyncio.Future[None]) -> None:
        """Count one answer whose commit completed; a failed write stops the run."""
        self.committing.discard(done)
        if done.cancelled():  # the loop is being torn down (interrupted): not stored
            return
        exc = done.exception()
        if isinstance(exc, (sqlite3.OperationalError, OSError)):  # disk full, I/O, read-only
            self.storage.append(storage_problem(exc))
            return
        if exc is not None:  # this answer only (e.g. too big for SQLite)
            self._failed(p, f"answer received but not stored: {type(exc).__name__}: {exc}")
        else:
            self._answered(p, record)
        self._done_with()

    def _done_with(self) -> None:
        self.bar.update(1)  # the postfix changes only on a retry or a failure
        if self.tick is not None:
            self.tick()

    async def _answer(self, client: Any, p: Planned) -> tuple[str, dict[str, Any]] | None | bool:
        """Request `p` until answered or given up.

        Returns (request text, answer) to store, None when given up (counted as failed), or
        False on a fatal error.
        """
        attempt = 0
        try:
            text, body = request_texts(p.request)  # the body and the cache row
        except Exception as exc:  # e.g. text UTF-8 cannot encode: the request cannot be sent
            self._failed(p, f"{type(exc).__name__}: {exc}")
            return None
        payload = p.payload()
        while True:
            try:
                record = await _call(client, payload, self.spec, body)
            except clients.RetryableError as exc:
                if attempt >= self.spec.max_retries:
                    self._failed(p, f"{exc} (gave up after {attempt} retries)")
                    return None
                if not await self._back_off(exc, attempt):
                    self._failed(
                        p, f"{exc} (gave up after {attempt} retries: {self._deadline_note()})"
                    )
                    return None
                attempt += 1
                continue
            except clients.FatalError as exc:
                self.fatal.append(_scrub(str(exc), self.api_key))
                return False
            except Exception as exc:  # non-retryable HTTP errors, unexpected bugs
                self._failed(p, f"{type(exc).__name__}: {exc}")
                return None
            return text, record

    async def _back_off(self, exc: clients.RetryableError, attempt: int) -> bool:
        """Count a retry and wait the server's wish (capped), else the jittered backoff.

        Returns False, without waiting, when the wait would end past the run deadline.
        """
        s = self.stats
        s.retries += 1
        s.retry_reasons[exc.reason] = s.retry_reasons.get(exc.reason, 0) + 1
        wait = exc.wait_s
        if wait is None:
            wait = backoff_delay(attempt, self.spec.backoff_s, self.rng)
        cap = min(self.spec.max_retry_after_s, MAX_RETRY_AFTER_S)
        if self._past(min(wait, cap)):
            return False
        self._notice(exc, wait, cap, attempt)
        await asyncio.sleep(min(wait, cap))
        self.postfix()
        return True

    # --- issue 19 item 9: the run deadline and what a long wait is for ---------------------

    def _past(self, wait_s: float) -> bool:
        """Return True when now + `wait_s` is past the run deadline (never without one)."""
        return self.deadline is not None and time.monotonic() + wait_s > self.deadline

    def _deadline_note(self) -> str:
        return (
            f"the run deadline of {self.spec.deadline_s:g} s passed (deadline_s); rerun to resume"
        )

    def _notice(self, exc: clients.RetryableError, wait: float, cap: float, attempt: int) -> None:
        """Say on stderr what a long wait is for (at most one line per 10 s of run)."""
        now = time.monotonic()
        if min(wait, cap) < NOTICE_WAIT_S or now - self.noticed_at < 10.0:
            return
        self.noticed_at = now
        asked = f"; the server asked {wait:g} s, capped by max_retry_after_s" if wait > cap else ""
        self.bar.write(
            f"waiting {min(wait, cap):g} s before retry {attempt + 1} of "
            f"{self.spec.max_retries} ({exc.reason}: {_scrub(str(exc), self.api_key)}{asked})",
            file=sys.stderr,
        )

    # --- end of issue 19 item 9 ------------------------------------------------------------

    def _failed(self, p: Planned, message: str) -> None:
        self.stats.failed += 1
        self.stats.errors[p.key] = _scrub(message, self.api_key)
        self.postfix()

    def _answered(self, p: Planned, record: dict[str, Any]) -> None:
        s = self.stats
        s.answered += 1
        if record.get("problems"):
            s.flagged[p.key] = "; ".join(record["problems"])
        s.prompt_tokens += int(record["prompt_tokens"] or 0)
        s.completion_tokens += int(record["completion_tokens"] or 0)
        cost = cost_usd(self.spec, record["prompt_tokens"], record["completion_tokens"])
        s.cost_usd += cost or 0.0


async def fetch(
    spec: JudgeSpec,
    todo: list[Planned],
    cache: RequestCache,
    *,
    cached: int = 0,
    progress: bool = True,
    seed: int | None = None,
    tick: Any = None,
) -> FetchStats:
    """Request every planned call in `todo` and store each answer in `cache` on arrival.

    Args:
        spec: A remote judge spec.
        todo: Planned requests that are not cached yet (distinct keys).
        cache: The request cache answers are written to.
        cached: How many planned requests were cache hits (shown in the progress bar).
        progress: Show a tqdm progress bar on stderr.
        seed: Seed of the backoff jitter (None: random).
        tick: Called with no argument after each request is done with (answered or given up);
            how a worker process reports its progress (`judgelab.judges.workers`).

    Raises:
        JudgeRunError: the endpoint rejected the key (401/403), or the cache cannot be
            written (disk full: the message says so); answers so far are cached.
    """
    stats = FetchStats(requested=len(todo))
    if not todo:
        return stats
    state = _Fetch(
        spec,
        todo,
        cache,
        stats,
        cached=cached,
        progress=progress,
        seed=seed,
        tick=tick,
    )
    try:
        async with state.exits:  # closes the client, if one was opened
            await asyncio.gather(*(state.worker() for _ in range(spec.concurrency)))
            await state.settle()
    finally:
        state.bar.close()
    if state.storage:
        raise JudgeRunError(
            f"cannot store answers in the request cache {cache.path}: {state.storage[0]}. "
            f"{stats.answered} answers were stored before stopping and are kept; free space "
            "and rerun the same command to request only the rest"
        )
    if state.fatal:
        raise JudgeRunError(
            f"the endpoint {spec.endpoint_id} refused the request: {state.fatal[0]}. Check the "
            f"key in ${spec.api_key_env}; {stats.answered} answers were cached before stopping"
        )
    return stats


__all__ = ["FetchStats", "backoff_delay", "fetch", "loop_factory", "run_coroutine"]
