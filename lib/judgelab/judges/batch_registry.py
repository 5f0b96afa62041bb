"""The persisted registry of submitted batches, so `status` and `collect` survive a restart.

One JSON file per submitted shard under `paths.cache()/batches/` (`<local_id>.json`, written
atomically), beside the shard itself (`<local_id>.input.jsonl`) and, once collected, its
downloaded output and error files. An entry records the judge, the endpoint (no credentials:
`JudgeSpec.endpoint_id`), the provider's file and batch ids, its state and its keys. No key
or secret is ever written here. An entry's id is its file name, checked by the one name
validator (`core.names.safe_name`); a file whose recorded `local_id` differs is refused.

An entry *holds* its keys until it is collected: they are not submitted again meanwhile. The
states of an entry are the provider's (`validating`, `in_progress`, `finalizing`,
`completed`, `failed`, `expired`, `cancelling`, `cancelled`) plus two of its own before the
provider knows the batch: `uploading` (the shard is being uploaded) and `submitting` (uploaded,
the batch is being created). A process killed in either is recovered by the next `refresh`.

An entry that cannot be polled or collected (the provider answers 404 for it, its shard is
missing or unreadable) is *broken*: its `problem` says why, it keeps holding its keys (it may
still be paid for upstream) and is tried again by every collect, while the other entries go
on. `abandon` gives one up: state `abandoned`, never polled or collected again, its keys
released for the next submit, its files kept for the record.
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
from judgelab.core.names import safe_name
from judgelab.errors import BatchFormatError, short_repr

TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
LOCAL = frozenset({"uploading", "submitting"})
ABANDONED = "abandoned"
ID_KIND = "batch id"


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
    problem: str | None = None

    @property
    def holds(self) -> bool:
        """Return True while the entry's keys must not be submitted again (not collected)."""
        return not self.collected

    @property
    def broken(self) -> bool:
        """Return True when the entry holds its keys but could not be polled or collected."""
        return self.holds and self.problem is not None

    @property
    def label(self) -> str:
        """Return the id to show: the provider's batch id, else the local id."""
        return self.batch_id or self.local_id

    @property
    def terminal(self) -> bool:
        """Return True once the provider will change nothing more about the batch."""
        return self.state in TERMINAL


class Registry:
    """The batch entries under one folder (default `paths.cache()/batches`)."""

    def __init__(self, root: str | os.PathLike[str] | None = None):
        self.root = Path(root) if root is not None else paths.cache() / "batches"

    def path(self, local_id: str, suffix: str = ".json") -> Path:
        """Return the file of an entry (`.json`, `.input.jsonl`, `.output.jsonl`, ...).

        Raises:
            UnsafeNameError: `local_id` is not one safe path component.
        """
        return self.root / f"{safe_name(ID_KIND, local_id)}{suffix}"

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
        """Read one entry; its id is its file name.

        Raises:
            UnsafeNameError: `local_id` (the file name) is not one safe path component.
            BatchFormatError: the file is not a valid registry entry, or the `local_id` it
                records is not its file name (names the file).
        """
        p = self.path(local_id)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
            recorded = data["local_id"]
            entry = Entry(**data)
        except (ValueError, TypeError, KeyError) as exc:
            raise BatchFormatError(str(p), 1, f"not a batch registry entry ({exc})") from None
        if recorded != local_id:
            raise BatchFormatError(
                str(p),
                1,
                f"batch id {short_repr(recorded)} (key local_id) does not match its file name "
                f"{local_id!r}; refusing the registry until the file is mended or moved away",
            )
        return entry

    def entries(self, judge: str | None = None) -> list[Entry]:
        """Return the entries (of `judge`), oldest first.

        Raises:
            UnsafeNameError, BatchFormatError: an entry file is refused (see `load`).
        """
        if not self.root.is_dir():
            return []
        found = []
        for p in sorted(self.root.glob("b*.json")):
            local_id = safe_name(ID_KIND, p.name[: -len(".json")], where=str(p))
            found.append(self.load(local_id))
        return [e for e in found if judge is None or e.judge == judge]

    def held_keys(self, judge: str) -> set[str]:
        """Return the keys of `judge`'s entries not collected yet."""
        return {k for e in self.entries(judge) if e.holds for k in e.keys}

    def running(self, judge: str) -> bool:
        """Return True while one of `judge`'s entries is neither collected nor broken."""
        return any(e.holds and not e.broken for e in self.entries(judge))

    def find(self, judge: str | None, batch_or_local_id: str) -> Entry:
        """Return the entry (of `judge`, or of any judge) with this batch id or local id.

        Raises:
            LookupError: no such entry (the message lists the known ones), or, with no
                judge, entries of several judges.
        """
        mine = self.entries(judge)
        hits = [e for e in mine if batch_or_local_id in (e.batch_id, e.local_id)]
        if len(hits) == 1:
            return hits[0]
        if hits:
            judges = sorted({e.judge for e in hits})
            raise LookupError(f"batch {batch_or_local_id!r} is in judges {judges}; add --judge")
        of = f" of judge {judge}" if judge else ""
        known = [e.label for e in mine]
        raise LookupError(f"no batch {batch_or_local_id!r}{of}; known: {known}")

    def check_abandon(self, entry: Entry, *, force: bool = False) -> None:
        """Refuse to abandon an entry already released, or a healthy one without `force`.

        Raises:
            ValueError: the entry is collected or abandoned already, or is not broken.
        """
        if not entry.holds:
            done = "abandoned" if entry.state == ABANDONED else "collected"
            raise ValueError(f"batch {entry.label} is already {done}; nothing to abandon")
        if not entry.broken and not force:
            raise ValueError(
                f"batch {entry.label} is not broken (state {entry.state}): abandoning it throws "
                "away what it answers; cancel it (`judgelab batch cancel --batch ID`) and "
                "collect it instead, or pass --force"
            )

    def abandon(self, entry: Entry, *, force: bool = False) -> Entry:
        """Give `entry` up: never polled or collected again, its keys free for the next submit.

        Its record and files stay on disk. See `check_abandon` for what is refused.
        """
        self.check_abandon(entry, force=force)
        why = f"; {entry.problem}" if entry.problem else ""
        entry.errors.append(f"abandoned at {now()} (was {entry.state}{why})")
        entry.state, entry.collected = ABANDONED, True
        return self.save(entry)

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Hold the registry's exclusive lock (one submit or collect at a time)."""
        return locks.file_lock(self.root / ".lock")


__all__ = ["ABANDONED", "ID_KIND", "LOCAL", "TERMINAL", "Entry", "Registry", "now"]
