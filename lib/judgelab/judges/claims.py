"""In-flight claims: runs that share a request cache never pay for one request twice.

Before it sends anything, a run claims the keys it is about to request, in the cache itself
(`RequestCache.claim`: one transaction that also checks they are still unanswered). A key
that another live run has claimed is not requested: this run waits until its answer is in
the cache and reads it from there. A key whose claim is gone (that run gave up on it) or
whose owner died is claimed in turn and requested.

Whether an owner lives is its lock: a run holds `core.locks.file_lock` on a file of its own
(`.<cache name>.claims/<owner>.lock`, beside the cache) for as long as it holds claims, so a
killed run (kill -9 included) frees its claims the moment it dies, whatever becomes of its
pid; and a live run's claims never expire, however long its requests take. Worker
processes (`judgelab.judges.workers`) fetch under their parent's claims. Where the platform
has no advisory locks (not POSIX) every owner looks dead, so runs there may pay twice, as
before claims existed.
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab.core import locks
from judgelab.errors import JudgeRunError
from judgelab.judges.cache import RequestCache, storage_problem

POLL_S = 0.25  # how often a waiting run looks for the answers another run is fetching


@dataclass
class Taken:
    """What one claim found: keys now ours, keys answered already, keys a live run holds."""

    mine: list[str] = field(default_factory=list)
    answered: set[str] = field(default_factory=set)
    busy: dict[str, int] = field(default_factory=dict)  # key -> the holder's pid


class Claims:
    """One run's claims on a cache's keys (a context manager: released on exit)."""

    def __init__(self, cache: RequestCache):
        self.cache = cache
        self.owner = secrets.token_hex(8)
        self.folder = cache.path.parent / f".{cache.path.name}.claims"
        self._held: Any = None

    def _lock_path(self, owner: str) -> Path:
        return self.folder / f"{owner}.lock"

    def __enter__(self) -> Claims:
        held = locks.file_lock(self._lock_path(self.owner))
        try:
            held.__enter__()  # held before the first claim names this owner
        except OSError as exc:  # a read-only or full disk
            raise self._cannot(exc) from None
        self._held = held
        return self

    def __exit__(self, *exc: object) -> None:
        # Best effort: claims left behind are dropped by the next run, as a dead owner's.
        with contextlib.suppress(sqlite3.Error, OSError):
            self.cache.release(self.owner)
        with contextlib.suppress(OSError):
            self._lock_path(self.owner).unlink(missing_ok=True)
        self._held.__exit__(None, None, None)

    def _cannot(self, exc: BaseException) -> JudgeRunError:
        return JudgeRunError(
            f"cannot claim requests in the request cache {self.cache.path}: {storage_problem(exc)}"
        )

    def _alive(self, owner: str) -> bool:
        """Return True while `owner` holds its lock (its run is alive); tidy a dead one's file."""
        path = self._lock_path(owner)
        try:
            with locks.file_lock(path, wait=False):
                path.unlink(missing_ok=True)
        except locks.LockBusy:
            return True
        return False

    def take(self, keys: list[str]) -> Taken:
        """Claim those of `keys` nobody answered or holds; see `RequestCache.claim`.

        Raises:
            JudgeRunError: the cache cannot be written (read-only, disk full).
        """
        try:
            mine, answered, busy = self.cache.claim(keys, self.owner, self._alive)
        except (sqlite3.OperationalError, OSError) as exc:  # read-only, disk full
            raise self._cannot(exc) from None
        return Taken(mine, answered, busy)

    def wait(self, keys: dict[str, int], deadline: float | None = None) -> Taken:
        """Wait until some of `keys` (held by other runs) are answered or free to claim.

        Returns at once what changed: answered keys, keys claimed now (their holder gave
        up on them or died), and those still held; at `deadline` (monotonic seconds) all
        of them may still be held.
        """
        while True:
            time.sleep(POLL_S)
            got = self.take(list(keys))
            if got.answered or got.mine or not got.busy:
                return got
            if deadline is not None and time.monotonic() > deadline:
                return got


__all__ = ["POLL_S", "Claims", "Taken"]
