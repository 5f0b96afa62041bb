"""The request loop: ask an endpoint for every uncached request, store each answer on arrival.

- bounded concurrency (`spec.concurrency` workers over one keep-alive pool) and a total
  per-request timeout (`spec.timeout_s`, enforced around the whole call);
- retries are ours (the clients never retry on their own, so every retry is counted): up to
  `spec.max_retries` on 429, 408/409, 5xx, timeouts, connection errors and malformed answers
  (invalid JSON, no choices), waiting `Retry-After` / `retry-after-ms` when the server sends
  it, else `backoff_s * 2**attempt` times a jitter in [0.5, 1.5) (capped at 60 s). Other
  4xx errors fail at once; 401/403 stop the whole run (the key is wrong for every request);
- every response is stored in the SQLite request cache the moment it arrives, before any
  parsing (`_GroupCommit`: one transaction per loop turn), so a run killed at any moment
  resumes by paying only for what was never stored.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from judgelab.errors import JudgeRunError
from judgelab.judges import clients
from judgelab.judges.cache import RequestCache
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.table import Planned, cost_usd

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
    ):
        from tqdm.auto import tqdm  # lazy: keeps `import judgelab.judges` light

        self.spec, self.stats, self.cached = spec, stats, cached
        self.store = _GroupCommit(cache)
        self.api_key = spec.api_key()
        self.rng = random.Random(seed)
        self.queue: asyncio.Queue[Planned] = asyncio.Queue()
        for p in todo:
            self.queue.put_nowait(p)
        self.bar = tqdm(
            total=len(todo),
            unit="req",
            desc=spec.judge_id[:40],
            disable=not progress,
            file=sys.stderr,
            dynamic_ncols=True,
            mininterval=0.5,
        )
        self.fatal: list[str] = []
        self.postfix()

    def postfix(self) -> None:
        """Show the cache hits, failures and retries beside the bar."""
        s = self.stats
        self.bar.set_postfix(cached=self.cached, failed=s.failed, retries=s.retries, refresh=False)

    async def worker(self, client: Any) -> None:
        """Take requests off the queue until it is empty or the endpoint refused the key."""
        while not self.fatal:
            try:
                p = self.queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if not await self._answer(client, p):
                return
            self.bar.update(1)  # the postfix changes only on a retry or a failure

    async def _answer(self, client: Any, p: Planned) -> bool:
        """Request `p` until it is stored or given up; return False on a fatal error."""
        attempt = 0
        while True:
            try:
                record = await _call(client, p.payload(), self.spec)
            except clients.RetryableError as exc:
                if attempt >= self.spec.max_retries:
                    self._failed(p, f"{exc} (gave up after {attempt} retries)")
                    return True
                await self._back_off(exc, attempt)
                attempt += 1
                continue
            except clients.FatalError as exc:
                self.fatal.append(_scrub(str(exc), self.api_key))
                return False
            except Exception as exc:  # non-retryable HTTP errors, unexpected bugs
                self._failed(p, f"{type(exc).__name__}: {exc}")
                return True
            await self.store.put(p.key, p.request, record)
            self._answered(record)
            return True

    async def _back_off(self, exc: clients.RetryableError, attempt: int) -> None:
        """Count a retry and wait the server's wish, else the jittered backoff."""
        s = self.stats
        s.retries += 1
        s.retry_reasons[exc.reason] = s.retry_reasons.get(exc.reason, 0) + 1
        wait = exc.wait_s
        if wait is None:
            wait = backoff_delay(attempt, self.spec.backoff_s, self.rng)
        await asyncio.sleep(min(wait, MAX_RETRY_AFTER_S))
        self.postfix()

    def _failed(self, p: Planned, message: str) -> None:
        self.stats.failed += 1
        self.stats.errors[p.key] = _scrub(message, self.api_key)
        self.postfix()

    def _answered(self, record: dict[str, Any]) -> None:
        s = self.stats
        s.answered += 1
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
    stats = FetchStats(requested=len(todo))
    if not todo:
        return stats
    state = _Fetch(spec, todo, cache, stats, cached=cached, progress=progress, seed=seed)
    try:
        async with clients.open_client(
            spec.client,
            spec.base_url,
            state.api_key,
            timeout_s=spec.timeout_s,
            concurrency=spec.concurrency,
        ) as client:
            await asyncio.gather(*(state.worker(client) for _ in range(spec.concurrency)))
    finally:
        state.bar.close()
    if state.fatal:
        raise JudgeRunError(
            f"the endpoint {spec.endpoint_id} refused the request: {state.fatal[0]}. Check the "
            f"key in ${spec.api_key_env}; {stats.answered} answers were cached before stopping"
        )
    return stats


def run_coroutine(coro: Any) -> Any:
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


__all__ = ["FetchStats", "backoff_delay", "fetch", "run_coroutine"]
