"""Parse answers into table rows while worker processes are still fetching them.

With `spec.workers > 1` the parent process mostly waits; `Prebuild.poll` (called between its
progress updates) reads the entries stored since the last poll (the cache's rowid order) and
turns those of the run's plan into judgment rows with `table.answered_rows`, so that after
the last answer only the stragglers are left to parse. The rows are made from the cache
entries themselves, the same records `table.build_for` would read (an entry is never
replaced: the first answer stored for a key stays), so the table is identical; entries the
poll missed are read and parsed by the final build as usual.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pandas as pd

from judgelab.judges.cache import RequestCache, check_record
from judgelab.judges.rows import item_records
from judgelab.judges.table import Plan, answered_rows


class Prebuild:
    """The rows of one plan parsed so far, by plan index."""

    def __init__(self, items: pd.DataFrame, plan: Plan, cache: RequestCache):
        self.plan, self.cache = plan, cache
        self.records: list[dict[str, Any]] = item_records(items)
        self.by_key: dict[str, list[int]] = {}
        for i, p in enumerate(plan.requests):
            self.by_key.setdefault(p.key, []).append(i)
        self.since = cache.last_rowid()  # None: a cache without rowids; nothing is prebuilt
        self.parsed: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}

    def poll(self) -> int:
        """Parse the plan's entries stored since the last poll; return how many."""
        if self.since is None:
            return 0
        try:
            fresh = self.cache.rows_after(self.since)
        except sqlite3.Error:  # busy or gone: the final build reads everything anyway
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
                self.parsed[i] = answered_rows(self.records, self.plan, i, record)
                n += 1
        return n

    def keys_left(self) -> list[str]:
        """Return the plan's distinct keys with a request not parsed yet."""
        return [k for k, idx in self.by_key.items() if any(i not in self.parsed for i in idx)]


__all__ = ["Prebuild"]
