"""Ingest batch output files into the request cache: idempotent, nothing lost silently.

Every answered line is stored under its `custom_id` (the request key) with the request that
produced it, in the record shape the online loop stores, so `table.build_for` builds the
same table from it. A key already cached is left alone (the cache keeps the first answer),
so ingesting a file twice changes nothing. Error lines (an HTTP error, an expired or
cancelled request, an answer with no choices, one over `max_response_bytes`) are counted
and listed, never cached: the next submit sends them again. A line whose `custom_id` is not
a request we know is counted as unknown and never stored under a key it cannot be checked
against. A line that is not a JSON object with a `custom_id` stops the ingest with the file
and line (what was stored before it stays stored: every stored line is a checked answer).

Reads both the OpenAI / vLLM `run-batch` output format and Anthropic's results format.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab.judges.batch.formats import BatchFormatError, answer_from_line
from judgelab.judges.cache import RequestCache, request_key

CHUNK = 1000


@dataclass
class IngestReport:
    """What an ingest read and stored."""

    lines: int = 0
    stored: int = 0
    already_cached: int = 0
    errors: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def add(self, other: IngestReport) -> IngestReport:
        """Add `other`'s counts to this report; return self."""
        self.lines += other.lines
        self.stored += other.stored
        self.already_cached += other.already_cached
        self.errors.update(other.errors)
        self.unknown += other.unknown
        self.seen |= other.seen
        return self

    def format(self, indent: str = "  ") -> str:
        """Return the report as text (the first few errors and unknown ids listed)."""
        lines = [
            f"{indent}lines read         {self.lines}",
            f"{indent}answers stored     {self.stored} new, {self.already_cached} already cached",
            f"{indent}error lines        {len(self.errors)} (not cached; the next submit "
            "sends them again)",
            f"{indent}unknown custom_id  {len(self.unknown)} (not stored)",
        ]
        lines += [f"{indent}ERROR {k[:12]}: {v}" for k, v in list(self.errors.items())[:5]]
        lines += [f"{indent}UNKNOWN {k[:64]}" for k in self.unknown[:5]]
        return "\n".join(lines)


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield `(line number, text)` of a JSONL file's non-blank lines.

    Raises:
        BatchFormatError: a line that is not UTF-8 (names the file and line).
    """
    with open(path, "rb") as fh:
        for no, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise BatchFormatError(str(path), no, f"not UTF-8 ({exc.reason})") from None
            if text.strip():
                yield no, text


def requests_of_input(path: str | os.PathLike[str], endpoint: str) -> dict[str, dict[str, Any]]:
    """Return {custom_id: cached request} of an OpenAI batch input file sent to `endpoint`.

    Raises:
        BatchFormatError: a line that is not a batch request, or whose `custom_id` is not
            the key of its request (names the file and line).
    """
    p = Path(path)
    out: dict[str, dict[str, Any]] = {}
    for no, text in read_lines(p):
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


def _store(cache: RequestCache, rows: list[tuple[str, Any, Any]], report: IngestReport) -> None:
    if rows:
        new = cache.put_many(rows)
        report.stored += new
        report.already_cached += len(rows) - new
        rows.clear()


def ingest_lines(
    lines: Iterable[tuple[int, str]],
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
    rows: list[tuple[str, Any, Any]] = []
    answered: set[str] = set()
    try:
        for no, text in lines:
            report.lines += 1
            cid, answer = answer_from_line(text, file=file, line=no, limit=max_response_bytes)
            report.seen.add(cid)
            if cid not in requests:
                report.unknown.append(cid)
            elif isinstance(answer, str):
                if cid not in answered:  # an answer and an error for one id: the answer wins
                    report.errors[cid] = answer
            else:
                report.errors.pop(cid, None)
                answered.add(cid)
                rows.append((cid, requests[cid], answer))
                if len(rows) >= CHUNK:
                    _store(cache, rows, report)
    finally:
        _store(cache, rows, report)  # what was read before a bad line is kept
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
