"""The persisted registry of submitted batches, so `status` and `collect` survive a restart.

One JSON file per submitted shard under `paths.cache()/batches/` (`<local_id>.json`, written
atomically), beside the shard itself (`<local_id>.input.jsonl`) and, once collected, its
downloaded output and error files. An entry records the judge, the endpoint (no credentials:
`JudgeSpec.endpoint_id`), the provider's file and batch ids, its state and its keys. No key
or secret is ever written here.

An entry *holds* its keys until it is collected: they are not submitted again meanwhile. The
states of an entry are the provider's (`validating`, `in_progress`, `finalizing`,
`completed`, `failed`, `expired`, `cancelling`, `cancelled`) plus two of its own before the
provider knows the batch: `uploading` (the shard is being uploaded) and `submitting` (uploaded,
the batch is being created). A process killed in either is recovered by the next `refresh`.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgelab.core import locks, paths, tables
from judgelab.judges.batch.formats import BatchFormatError

TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
LOCAL = frozenset({"uploading", "submitting"})


def now() -> str:
    """Return the current time, ISO-8601 UTC."""
    return datetime.now(UTC).isoformat()


@dataclass
class Entry:
    """One submitted shard: where it went, what it holds, and what came back."""

    local_id: str
    provider: str
    judge: str
    endpoint: str
    keys: list[str]
    state: str = "uploading"
    input_file_id: str | None = None
    batch_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    request_counts: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    collected: bool = False
    result: dict[str, Any] = field(default_factory=dict)
    submitted_at: str = field(default_factory=now)
    updated_at: str = field(default_factory=now)

    @property
    def holds(self) -> bool:
        """Return True while the entry's keys must not be submitted again (not collected)."""
        return not self.collected

    @property
    def terminal(self) -> bool:
        """Return True once the provider will change nothing more about the batch."""
        return self.state in TERMINAL


class Registry:
    """The batch entries under one folder (default `paths.cache()/batches`)."""

    def __init__(self, root: str | os.PathLike[str] | None = None):
        self.root = Path(root) if root is not None else paths.cache() / "batches"

    def path(self, local_id: str, suffix: str = ".json") -> Path:
        """Return the file of an entry (`.json`, `.input.jsonl`, `.output.jsonl`, ...)."""
        return self.root / f"{local_id}{suffix}"

    def new_id(self) -> str:
        """Return a fresh local id (time-ordered, unique across processes)."""
        ns = time.time_ns()
        stamp = datetime.fromtimestamp(ns // 10**9, UTC).strftime("%Y%m%dT%H%M%S")
        return f"b{stamp}.{ns % 10**9:09d}-{secrets.token_hex(3)}"

    def save(self, entry: Entry) -> Entry:
        """Write `entry` atomically and return it."""
        entry.updated_at = now()
        tables.write_text(self.path(entry.local_id), json.dumps(asdict(entry), indent=1) + "\n")
        return entry

    def load(self, local_id: str) -> Entry:
        """Read one entry.

        Raises:
            BatchFormatError: the entry file is not a valid registry entry (names the file).
        """
        p = self.path(local_id)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
            return Entry(**data)
        except (ValueError, TypeError) as exc:
            raise BatchFormatError(str(p), 1, f"not a batch registry entry ({exc})") from None

    def entries(self, judge: str | None = None) -> list[Entry]:
        """Return the entries (of `judge`), oldest first."""
        if not self.root.is_dir():
            return []
        found = [self.load(p.name[: -len(".json")]) for p in sorted(self.root.glob("b*.json"))]
        return [e for e in found if judge is None or e.judge == judge]

    def held_keys(self, judge: str) -> set[str]:
        """Return the keys of `judge`'s entries not collected yet."""
        return {k for e in self.entries(judge) if e.holds for k in e.keys}

    def find(self, judge: str, batch_or_local_id: str) -> Entry:
        """Return `judge`'s entry with this batch id or local id.

        Raises:
            LookupError: no such entry (the message lists the known ones).
        """
        mine = self.entries(judge)
        for e in mine:
            if batch_or_local_id in (e.batch_id, e.local_id):
                return e
        known = [e.batch_id or e.local_id for e in mine]
        raise LookupError(f"no batch {batch_or_local_id!r} of judge {judge}; known: {known}")

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Hold the registry's exclusive lock (one submit or collect at a time)."""
        return locks.file_lock(self.root / ".lock")


__all__ = ["LOCAL", "TERMINAL", "Entry", "Registry", "now"]
