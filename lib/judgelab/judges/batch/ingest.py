"""Ingest batch output files into the request cache: idempotent, nothing lost silently.

Every answered line is stored under its `custom_id` (the request key) with the request that
produced it, in the record shape the online loop stores, so `table.build_for` builds the
same table from it. A key already cached is left alone (the cache keeps the first answer),
so ingesting a file twice changes nothing; a second answer that differs from the first (in
the same file or against the cache) is a *conflict*: counted and named, never stored. Error
lines (an HTTP error, an expired or cancelled request, an answer with no choices, one over
`max_response_bytes`) are counted and listed, never cached: the next submit sends them
again. A line longer than `tables.max_line_bytes()` (`JUDGELAB_MAX_LINE_BYTES`) is never
read whole: it is skipped to its end and counted as an unreadable error line naming the file
and line (its request, never seen, goes again). A line whose `custom_id` is not a request we
know is counted as unknown and never stored under a key it cannot be checked against. A line
that is not a JSON object with a `custom_id` stops the ingest with the file and line (what
was stored before it stays stored: every stored line is a checked answer).

Reads both the OpenAI / vLLM `run-batch` output format and Anthropic's results format.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab.core import tables
from judgelab.errors import LineTooLong
from judgelab.judges.batch.formats import BatchFormatError, answer_from_line
from judgelab.judges.cache import RequestCache, request_key

CHUNK = 1000


@dataclass
class IngestReport:
    """What an ingest read and stored.

    `errors` maps a custom_id to why its line is not an answer; `unreadable` lists the lines
    over the size cap (file, line, why), whose custom_id is unknown; `conflicts` maps a
    custom_id to where a second, different answer for it was ignored.
    """

    lines: int = 0
    stored: int = 0
    already_cached: int = 0
    errors: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    unreadable: list[str] = field(default_factory=list)
    conflicts: dict[str, str] = field(default_factory=dict)

    @property
    def error_lines(self) -> int:
        """Return how many lines came back without an answer (errors and unreadable)."""
        return len(self.errors) + len(self.unreadable)

    def add(self, other: IngestReport) -> IngestReport:
        """Add `other`'s counts to this report; return self."""
        self.lines += other.lines
        self.stored += other.stored
        self.already_cached += other.already_cached
        self.errors.update(other.errors)
        self.unknown += other.unknown
        self.seen |= other.seen
        self.unreadable += other.unreadable
        for cid, where in other.conflicts.items():
            self.conflicts.setdefault(cid, where)
        return self

    def format(self, indent: str = "  ") -> str:
        """Return the report as text (the first few errors, unknown ids and conflicts listed)."""
        lines = [
            f"{indent}lines read         {self.lines}",
            f"{indent}answers stored     {self.stored} new, {self.already_cached} already cached",
            f"{indent}error lines        {self.error_lines} (not cached; the next submit "
            "sends them again)",
            f"{indent}unknown custom_id  {len(self.unknown)} (not stored)",
            f"{indent}conflicting answers {len(self.conflicts)} (the first answer is kept; the "
            "others are not stored)",
        ]
        lines += [f"{indent}ERROR {k[:12]}: {v}" for k, v in list(self.errors.items())[:5]]
        lines += [f"{indent}ERROR {v}" for v in self.unreadable[:5]]
        lines += [f"{indent}UNKNOWN {k[:64]}" for k in self.unknown[:5]]
        lines += [f"{indent}CONFLICT {k}: {v}" for k, v in list(self.conflicts.items())[:5]]
        return "\n".join(lines)


def read_lines(path: Path) -> Iterator[tuple[int, str | LineTooLong]]:
    """Yield `(line number, text)` of a JSONL file's non-blank lines.

    A line longer than `tables.max_line_bytes()` is not read whole (`tables.bounded_lines`):
    its text is the `LineTooLong` naming the file and line.

    Raises:
        BatchFormatError: a line that is not UTF-8 (names the file and line).
    """
    limit = tables.max_line_bytes()
    with open(path, "rb") as fh:
        for no, raw in enumerate(tables.bounded_lines(fh, limit), start=1):
            if raw is None:
                yield no, tables.too_long(str(path), no, limit)
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise BatchFormatError(str(path), no, f"not UTF-8 ({exc.reason})") from None
            if text.strip():
                yield no, text


def requests_of_input(path: str | os.PathLike[str], endpoint: str) -> dict[str, dict[str, Any]]:
    """Return {custom_id: cached request} of an OpenAI batch input file sent to `endpoint`.

    Raises:
        BatchFormatError: a line that is not a batch request, whose `custom_id` is not the
            key of its request, or longer than `tables.max_line_bytes()` (names the file and
            line).
    """
    p = Path(path)
    out: dict[str, dict[str, Any]] = {}
    for no, text in read_lines(p):
        if isinstance(text, LineTooLong):
            raise BatchFormatError(str(p), no, text.problem)
        try:
            obj = json.loads(text)
            cid, body = obj["custom_id"], obj["body"]
            request = {"endpoint": endpoint, **body}
        except (ValueError, KeyError, TypeError) as exc:
            raise BatchFormatError(str(p), no, f"not a batch request line ({exc})") from None
        if request_key(request) != cid:
            raise BatchFormatError(str(p), no, "custom_id is not the key of the request")
        out[cid] = request
    return out


def _answer(record: Mapping[str, Any]) -> bytes:
    """Return a digest of what makes two records one answer: content and finish reason."""
    text = json.dumps([record.get("content"), record.get("finish_reason")])
    return hashlib.sha256(text.encode("ascii")).digest()


@dataclass
class _Pending:
    """Answers read and not stored yet: (custom_id, request, record, line), in file order."""

    file: str
    rows: list[tuple[str, Any, Any, int]] = field(default_factory=list)

    def flush(self, cache: RequestCache, report: IngestReport) -> None:
        """Store the answers not cached yet; compare the others with the cached answer."""
        if not self.rows:
            return
        keys = [cid for cid, *_ in self.rows]
        cached = cache.get_many(keys)
        new = [(cid, req, rec) for cid, req, rec, _ in self.rows if cid not in cached]
        stored = cache.put_many(new) if new else 0
        if stored < len(new):  # another process stored some between the read and the write
            cached = cache.get_many(keys)  # ours read back equal: only theirs can conflict
        conflicts = 0
        for cid, _, rec, no in self.rows:
            if cid in cached and _answer(cached[cid]) != _answer(rec):
                conflicts += 1
                report.conflicts.setdefault(
                    cid,
                    f"{self.file}, line {no}: another answer than the cached one, which is kept",
                )
        report.stored += stored
        report.already_cached += len(self.rows) - stored - conflicts
        self.rows.clear()


def ingest_lines(
    lines: Iterable[tuple[int, str | LineTooLong]],
    requests: Mapping[str, Mapping[str, Any]],
    cache: RequestCache,
    *,
    file: str,
    max_response_bytes: int | None = None,
) -> IngestReport:
    """Store the answers among `lines` (numbered output lines of `file`) in `cache`.

    Raises:
        BatchFormatError: a line that is not a JSON object with a `custom_id`.
    """
    report = IngestReport()
    pending = _Pending(file)
    first: dict[str, tuple[bytes, int]] = {}  # custom_id: (answer digest, line) kept
    try:
        for no, text in lines:
            report.lines += 1
            if isinstance(text, LineTooLong):
                report.unreadable.append(str(text))
                continue
            cid, answer = answer_from_line(text, file=file, line=no, limit=max_response_bytes)
            report.seen.add(cid)
            if cid not in requests:
                report.unknown.append(cid)
            elif isinstance(answer, str):
                if cid not in first:  # an answer and an error for one id: the answer wins
                    report.errors[cid] = answer
            elif cid in first:  # the same id answered twice in this file
                kept, line = first[cid]
                if kept == _answer(answer):
                    report.already_cached += 1
                else:
                    report.conflicts.setdefault(
                        cid,
                        f"{file}, line {no}: another answer than the first one (line {line}), "
                        "which is kept",
                    )
            else:
                report.errors.pop(cid, None)
                first[cid] = (_answer(answer), no)
                pending.rows.append((cid, requests[cid], answer, no))
                if len(pending.rows) >= CHUNK:
                    pending.flush(cache, report)
    finally:
        pending.flush(cache, report)  # what was read before a bad line is kept
    return report


def ingest_file(
    path: str | os.PathLike[str],
    requests: Mapping[str, Mapping[str, Any]],
    cache: RequestCache,
    *,
    max_response_bytes: int | None = None,
) -> IngestReport:
    """Ingest one output (or error) file; see the module docstring."""
    p = Path(path)
    return ingest_lines(
        read_lines(p), requests, cache, file=str(p), max_response_bytes=max_response_bytes
    )


__all__ = ["IngestReport", "ingest_file", "ingest_lines", "read_lines", "requests_of_input"]
