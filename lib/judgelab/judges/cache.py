"""The SQLite request cache: every model call goes through it, so nothing is paid twice.

Keys are the sha256 of a canonical JSON of the request (model, messages, sampling params).
The API key is never part of a request and never stored: `request_key` refuses requests that
carry fields such as `api_key`. The database runs in WAL mode with a busy timeout, so several
processes can read and write it at once; the first answer stored for a key wins.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgelab.core import paths

SECRET_FIELDS = frozenset({"api_key", "apikey", "authorization", "key", "token", "secret"})


def canonical_json(obj: Any) -> str:
    """Serialise `obj` deterministically (sorted keys, no whitespace, UTF-8 kept).

    >>> canonical_json({"b": 1, "a": [1.0, "é"]})
    '{"a":[1.0,"é"],"b":1}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(request: Mapping[str, Any]) -> str:
    """Return the sha256 hex digest of the canonical JSON of `request`.

    `request` holds what determines the answer: model, messages and sampling params.

    Raises:
        ValueError: the request carries a credential field (keys never enter the cache).
    """
    leaked = [k for k in request if str(k).lower() in SECRET_FIELDS]
    if leaked:
        raise ValueError(
            f"request carries credential field(s) {leaked}; keys never enter the cache"
        )
    return hashlib.sha256(canonical_json(dict(request)).encode("utf-8")).hexdigest()


def default_path() -> Path:
    """Return the default cache database path (`paths.cache()/requests.sqlite`)."""
    return paths.cache() / "requests.sqlite"


# A rowid table: rows of several KB are appended in rowid order and only the small key index
# is kept sorted (a WITHOUT ROWID table would split pages of the big rows on every random
# key; caches created that way by earlier versions keep working, the queries are the same).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""


class RequestCache:
    """A process-safe key → response store backed by SQLite in WAL mode."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout_s: float = 60.0):
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._timeout_s = timeout_s
        # One thread at a time uses a cache, but not always the thread that opened it (the
        # runner fetches in a worker thread inside a notebook's event loop).
        self._conn = sqlite3.connect(
            self.path, timeout=timeout_s, isolation_level=None, check_same_thread=False
        )
        self._retry(lambda: self._conn.execute("PRAGMA journal_mode=WAL"))
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
        self._retry(lambda: self._conn.execute(_SCHEMA))

    def _retry(self, fn: Any) -> Any:
        """Run `fn`, retrying while another process holds the write lock."""
        deadline = time.monotonic() + self._timeout_s
        delay = 0.01
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> RequestCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM requests").fetchone()[0])

    def __contains__(self, key: str) -> bool:
        row = self._conn.execute("SELECT 1 FROM requests WHERE key = ?", (key,)).fetchone()
        return row is not None

    def get(self, key: str) -> dict[str, Any] | None:
        """Return the stored response for `key`, or None."""
        row = self._conn.execute("SELECT response FROM requests WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Return {key: response} for the keys that are stored."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT key, response FROM requests WHERE key IN ({marks})", chunk
            ).fetchall()
            found.update((k, json.loads(v)) for k, v in rows)
        return found

    def present(self, keys: Iterable[str]) -> set[str]:
        """Return which of `keys` are stored (without reading their responses)."""
        keys = list(dict.fromkeys(keys))
        found: set[str] = set()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(f"SELECT key FROM requests WHERE key IN ({marks})", chunk)
            found.update(r[0] for r in rows)
        return found

    def put(self, key: str, request: Mapping[str, Any], response: Mapping[str, Any]) -> bool:
        """Store `response` for `key` unless one is stored already; return True if stored."""
        return self.put_many([(key, request, response)]) == 1

    def put_many(self, entries: Iterable[tuple[str, Mapping[str, Any], Mapping[str, Any]]]) -> int:
        """Store several entries in one transaction; return how many were new."""
        now = datetime.now(UTC).isoformat()
        rows = [(k, canonical_json(dict(q)), canonical_json(dict(r)), now) for k, q, r in entries]
        if not rows:
            return 0

        def txn() -> int:
            cur = self._conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                before = self._conn.total_changes
                cur.executemany(
                    "INSERT OR IGNORE INTO requests (key, request, response, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    rows,
                )
                cur.execute("COMMIT")
                return self._conn.total_changes - before
            except BaseException:
                cur.execute("ROLLBACK")
                raise

        return int(self._retry(txn))

    def keys(self) -> list[str]:
        """Return every stored key."""
        return [r[0] for r in self._conn.execute("SELECT key FROM requests")]
