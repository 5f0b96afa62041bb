"""Rows parsed while workers fetch: the table 1.5 s sooner after 10,000 requests (`make bench`).

Measured in issue 32 (`bench/scale_runner.py`, `aiohttp:2` vs `aiohttp:2:-prebuild`, 2
shared cores): the time after the request phase fell from 3.8 to 2.2 s at 10,000 requests
(medians of 4, each pair lower; load 8) and from 9.0 to 7.9 s at 20,000 (medians of 2; load
15). It only runs with `spec.workers > 1`, and goes with the workers if they go.

With `spec.workers > 1` the parent process mostly waits, and after the request phase every
answer must still be parsed into a row. `Prebuild.poll`, called between the workers'
progress updates, reads the entries committed since its last poll in the cache's
rowid order, over a connection of its own (so it never sees an uncommitted write), and turns
those of the run's plan into judgment rows with `table.answered_rows`. After the last answer
only the stragglers are left to parse. The rows are made from the cache entries themselves,
the records `table.build_for` would read (an entry is never replaced: the first answer
stored for a key stays), so the table is identical; what a poll missed is read and parsed by
the final build as usual.
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

from judgelab.judges.cache import RequestCache, check_record
from judgelab.judges.table import Plan, answered_rows


class Prebuild:
    """The rows of one plan parsed so far, by plan index."""

    def __init__(
        self, records: list[dict[str, Any]], plan: Plan, cache_path: str | os.PathLike[str]
    ):
        if plan.judge is None:
            raise ValueError("the plan carries no resolved judge; make it with `plan_for`")
        self.records, self.plan, self.judge = records, plan, plan.judge
        self.by_key: dict[str, list[int]] = {}
        for i, p in enumerate(plan.requests):
            self.by_key.setdefault(p.key, []).append(i)
        self.parsed: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
        self._reader = RequestCache(cache_path)
        self.since = self._reader.last_rowid()  # None: a cache without rowids: no head start

    def poll(self) -> int:
        """Parse the plan's entries committed since the last poll; return how many rows."""
        if self.since is None:
            return 0
        try:
            fresh = self._reader.rows_after(self.since)
        except sqlite3.Error:  # busy: the next poll, or the final build, reads them
            return 0
        n = 0
        for rowid, key, text in fresh:
            self.since = max(self.since, rowid)
            indices = self.by_key.get(key)
            if not indices:
                continue
            try:
                record = json.loads(text)
            except ValueError:
                continue  # left to the final build, which reports it
            if not isinstance(record, dict):
                continue
            record = check_record(record)[0]
            for i in indices:
                self.parsed[i] = answered_rows(
                    self.records, self.plan.requests[i], record, self.judge
                )
                n += 1
        return n

    def keys_left(self) -> list[str]:
        """Return the plan's distinct keys with a request not parsed yet."""
        return [k for k, idx in self.by_key.items() if any(i not in self.parsed for i in idx)]

    def close(self) -> None:
        """Close the reading connection."""
        self._reader.close()


__all__ = ["Prebuild"]
