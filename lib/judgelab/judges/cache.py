"""The SQLite request cache: every model call goes through it, so nothing is paid twice.

Keys are the sha256 of a canonical JSON of the request (model, messages, sampling params).
The API key is never part of a request and never stored: `request_key` refuses requests that
carry fields such as `api_key`. The database runs in WAL mode with a busy timeout, so several
processes can read and write it at once; the first answer stored for a key wins.

A stored answer (a record of `judgelab.judges.loop`) is checked on the way in and on the way
out (`check_record`): text with lone surrogates (which UTF-8 cannot encode) is stored with
U+FFFD in their place and the original kept JSON-escaped, a text field that is not text (a
number, a list) is recorded as none with its JSON kept, and a token count that is not a
plausible non-negative integer is recorded as unknown (None); all are flagged in the record.
One entry that still cannot be encoded is stored JSON-escaped, so it never fails the
transaction it shares with other answers. `evict` removes entries (`judgelab judge
--evict-invalid` evicts the flagged ones of a run, to pay for them again). A `claims` table,
made by the first claim, records which run is fetching which key (`judgelab.judges.claims`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgelab.core import paths
from judgelab.errors import clip

SECRET_FIELDS = frozenset({"api_key", "apikey", "authorization", "key", "token", "secret"})


def canonical_json(obj: Any) -> str:
    """Serialise `obj` deterministically (sorted keys, no whitespace, UTF-8 kept).

    >>> canonical_json({"b": 1, "a": [1.0, "é"]})
    '{"a":[1.0,"é"],"b":1}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def storable_json(obj: Any) -> str:
    r"""Return `canonical_json(obj)`, or its ASCII-escaped form if UTF-8 cannot encode it.

    The escaped form (lone surrogates written as `\udXXX`) is the same JSON value, so
    nothing is lost, and it never fails to encode for SQLite.

    >>> storable_json({"a": chr(0xD83D)})
    '{"a":"\\ud83d"}'
    """
    text = canonical_json(obj)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text


def request_texts(request: Mapping[str, Any]) -> tuple[str, bytes]:
    """Return a request's canonical JSON (what the cache stores) and the body to send.

    The body is the same JSON without the `endpoint` field, cut out of the canonical text when
    `endpoint` is its first key (it is for every request the planner makes), so a request is
    encoded once per call, not twice.

    >>> request_texts({"model": "m", "endpoint": "http://h/v1", "top_p": 1.0})
    ('{"endpoint":"http://h/v1","model":"m","top_p":1.0}', b'{"model":"m","top_p":1.0}')
    """
    text = canonical_json(request)
    endpoint = request.get("endpoint")
    if endpoint is None:
        return text, text.encode("utf-8")
    head = '{"endpoint":' + json.dumps(endpoint, ensure_ascii=False) + ","
    if text.startswith(head):
        return text, ("{" + text[len(head) :]).encode("utf-8")
    payload = {k: v for k, v in request.items() if k != "endpoint"}
    return text, canonical_json(payload).encode("utf-8")


MAX_TOKEN_COUNT = 10**9
_SURROGATES = re.compile(r"[\ud800-\udfff]")
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens")
TEXT_FIELDS = ("content", "finish_reason", "response_model", "response_id")


def token_count(value: Any) -> int | None:
    """Return `value` as a token count, or None if it is not a plausible one.

    >>> [token_count(v) for v in (12, 12.0, -1, 12.5, 1e23, "abc", True, None)]
    [12, 12, None, None, None, None, None, None]
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if 0 <= value <= MAX_TOKEN_COUNT else None


def safe_text(text: str) -> str:
    """Return `text` with lone surrogates (not encodable as UTF-8) replaced by U+FFFD.

    >>> safe_text("ok " + chr(0xD83D)) == "ok " + chr(0xFFFD)
    True
    """
    return _SURROGATES.sub("\ufffd", text)


def check_record(record: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Return a stored answer made safe to use, and what was wrong with it (flags).

    Token counts that are not plausible non-negative integers (-1, 12.5, 1e23, "abc") become
    None (unknown) and the raw value is kept in `usage_invalid`; text fields with lone
    surrogates get U+FFFD in their place, the original is kept JSON-escaped under
    `<field>_escaped`; a text field that is not text (`content: 42`, a list, an object) becomes
    None (no text: an invalid judgment), its JSON kept under `<field>_invalid`. A record
    checked before keeps its flags (`problems` lists them again).
    """
    out = dict(record)
    problems = [str(p) for p in out.get("problems") or []]
    for name in TOKEN_FIELDS:
        value = out.get(name)
        if value is not None and token_count(value) is None:
            problems.append(f"invalid usage {name}={value!r}; recorded as unknown")
            out.setdefault("usage_invalid", {})[name] = repr(value)
            out[name] = None
        elif value is not None:
            out[name] = token_count(value)
    for name in TEXT_FIELDS:
        value = out.get(name)
        if value is not None and not isinstance(value, str):  # issue 32 item 5: 42, [..], {..}
            shown = clip(storable_json(value), 80)
            kind = type(value).__name__
            problems.append(f"{name} is a {kind}, not text ({shown}); recorded as none")
            out[f"{name}_invalid"] = storable_json(value)
            out[name] = None
        elif isinstance(value, str) and _SURROGATES.search(value):
            problems.append(f"{name} held text UTF-8 cannot encode; replaced with U+FFFD")
            out[f"{name}_escaped"] = json.dumps(value, ensure_ascii=True)
            out[name] = safe_text(value)
    problems = list(dict.fromkeys(problems))
    if problems:
        out["problems"] = problems
    return out, problems


def _request_text(request: Mapping[str, Any] | str) -> str:
    """Return the stored text of a request given as a mapping or as its canonical JSON."""
    if not isinstance(request, str):
        return storable_json(dict(request))
    try:
        request.encode("utf-8")
    except UnicodeEncodeError:
        return storable_json(json.loads(request))
    return request


def storage_problem(exc: BaseException) -> str:
    """Describe a failed cache write: "disk full" first when that is what it was.

    >>> storage_problem(sqlite3.OperationalError("database or disk is full"))
    'disk full (database or disk is full)'
    """
    full = isinstance(exc, OSError) and exc.errno == errno.ENOSPC
    full = full or isinstance(exc, sqlite3.Error) and "full" in str(exc).lower()
    detail = f"{type(exc).__name__}: {exc}" if isinstance(exc, OSError) else str(exc)
    return f"disk full ({detail})" if full else detail


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
# Requests in flight: which run (`owner`, process `pid`) is fetching a key (`judges.claims`).
_CLAIMS = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    pid INTEGER NOT NULL
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

    def put(self, key: str, request: Mapping[str, Any] | str, response: Mapping[str, Any]) -> bool:
        """Store `response` for `key` unless one is stored already; return True if stored."""
        return self.put_many([(key, request, response)]) == 1

    def put_many(
        self, entries: Iterable[tuple[str, Mapping[str, Any] | str, Mapping[str, Any]]]
    ) -> int:
        """Store several entries in one transaction; return how many were new."""
        return self.write_rows(self.encode(entries))

    @staticmethod
    def encode(
        entries: Iterable[tuple[str, Mapping[str, Any] | str, Mapping[str, Any]]],
    ) -> list[tuple[str, str, str, str]]:
        """Return the rows `write_rows` stores for (key, request, response) entries.

        A request may come as its canonical JSON already (`request_texts`).
        """
        now = datetime.now(UTC).isoformat()
        return [(k, _request_text(q), storable_json(dict(r)), now) for k, q, r in entries]

    def write_rows(self, rows: list[tuple[str, str, str, str]]) -> int:
        """Store encoded rows (`encode`) in one transaction; return how many were new."""
        if not rows:
            return 0
        sql = "INSERT OR IGNORE INTO requests (key, request, response, created_at) VALUES "
        return int(self._write(sql + "(?, ?, ?, ?)", rows))

    def evict(self, keys: Iterable[str]) -> int:
        """Remove the entries of `keys` (they will be requested, and paid, again)."""
        return int(self._write("DELETE FROM requests WHERE key = ?", [(k,) for k in keys]))

    def _write(self, sql: str, rows: list[tuple[Any, ...]]) -> int:
        """Run `sql` over `rows` in one transaction; return how many rows changed."""

        def body(cur: sqlite3.Cursor) -> int:
            before = self._conn.total_changes
            cur.executemany(sql, rows)
            return self._conn.total_changes - before

        return int(self._transaction(body)) if rows else 0

    def _transaction(self, body: Callable[[sqlite3.Cursor], Any]) -> Any:
        """Run `body(cursor)` in one write transaction (retried while the cache is busy).

        A failed write raises its own error (e.g. "database or disk is full"), never the
        "no transaction is active" of a rollback after SQLite already rolled back.
        """

        def txn() -> Any:
            cur = self._conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                out = body(cur)
                cur.execute("COMMIT")
                return out
            except BaseException:
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        cur.execute("ROLLBACK")
                raise

        return self._retry(txn)

    def invalid(self, keys: Iterable[str] | None = None) -> dict[str, list[str]]:
        """Return {key: problems} of the stored entries (of `keys`; None: all) that are flagged.

        Flagged: not a JSON object, or `check_record` finds (or found) a problem.
        """
        wanted = None if keys is None else list(dict.fromkeys(keys))
        if wanted is None:
            rows: Iterable[tuple[str, str]] = self._conn.execute(
                "SELECT key, response FROM requests"
            )
        else:
            rows = self._rows(wanted)
        found: dict[str, list[str]] = {}
        for key, text in rows:
            try:
                record = json.loads(text)
            except ValueError:
                found[key] = ["the stored answer is not JSON"]
                continue
            if not isinstance(record, dict):
                found[key] = ["the stored answer is not a JSON object"]
                continue
            problems = check_record(record)[1]
            if problems:
                found[key] = problems
        return found

    def _rows(self, keys: list[str]) -> Iterable[tuple[str, str]]:
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            yield from self._conn.execute(
                f"SELECT key, response FROM requests WHERE key IN ({marks})", chunk
            ).fetchall()

    def last_rowid(self) -> int | None:
        """Return the newest entry's rowid (0 when empty; None for a WITHOUT ROWID cache)."""
        try:
            row = self._conn.execute("SELECT MAX(rowid) FROM requests").fetchone()
        except sqlite3.OperationalError:  # created WITHOUT ROWID by an older version
            return None
        return int(row[0] or 0)

    def rows_after(self, rowid: int) -> list[tuple[int, str, str]]:
        """Return (rowid, key, response text) of the entries stored after `rowid`, in order."""
        return self._conn.execute(
            "SELECT rowid, key, response FROM requests WHERE rowid > ? ORDER BY rowid", (rowid,)
        ).fetchall()

    def keys(self) -> list[str]:
        """Return every stored key."""
        return [r[0] for r in self._conn.execute("SELECT key FROM requests")]

    def claim(
        self, keys: Iterable[str], owner: str, alive: Callable[[str], bool]
    ) -> tuple[list[str], set[str], dict[str, int]]:
        """Claim the unanswered `keys` for `owner`, in one transaction (`judges.claims`).

        A key claimed by another owner stays theirs while `alive(owner)` says so; a dead
        owner's claims are dropped (all of them) and its keys claimed here.

        Returns:
            (keys claimed now, keys answered already, {key: pid} of keys a live other holds).
        """
        wanted = list(dict.fromkeys(keys))

        def body(cur: sqlite3.Cursor) -> tuple[list[str], set[str], dict[str, int]]:
            cur.execute(_CLAIMS)  # made by the first claim: a cache only read is never written
            answered = self.present(wanted)
            open_keys = [k for k in wanted if k not in answered]
            held: dict[str, tuple[str, int]] = {}
            for start in range(0, len(open_keys), 500):
                chunk = open_keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT key, owner, pid FROM claims WHERE key IN ({marks})"
                held.update((k, (o, p)) for k, o, p in cur.execute(sql, chunk))
            live = {o: o == owner or alive(o) for o, _ in held.values()}
            cur.executemany(
                "DELETE FROM claims WHERE owner = ?", [(o,) for o in live if not live[o]]
            )
            busy = {k: p for k, (o, p) in held.items() if live[o] and o != owner}
            mine = [k for k in open_keys if k not in busy]
            cur.executemany(
                "INSERT OR REPLACE INTO claims (key, owner, pid) VALUES (?, ?, ?)",
                [(k, owner, os.getpid()) for k in mine],
            )
            return mine, answered, busy

        return self._transaction(body)

    def release(self, owner: str) -> int:
        """Drop every claim of `owner` (its answers are stored, or it gave up on them)."""

        def body(cur: sqlite3.Cursor) -> int:
            cur.execute(_CLAIMS)
            return cur.execute("DELETE FROM claims WHERE owner = ?", (owner,)).rowcount

        return int(self._transaction(body))


@contextlib.contextmanager
def opened(cache: RequestCache | None) -> Iterator[RequestCache]:
    """Yield `cache`, or the default cache opened for the block and closed after it."""
    if cache is not None:
        yield cache
        return
    own = RequestCache()
    try:
        yield own
    finally:
        own.close()
