"""Submit, poll, cancel and collect OpenAI-style batches (the `openai` SDK's Files + Batches).

Works against any endpoint that speaks the OpenAI Batch API at the spec's `base_url` (OpenAI,
Azure-style gateways, the loopback fake in `judgelab.testing.batch_server`), with the key
from the spec's `api_key_env`; the key is given to the SDK only, never written anywhere.

Each step is recorded in the registry before the next one starts (`registry` module), so a
process killed at any moment loses nothing: `refresh` (run by every submit and collect)
adopts a batch created just before a kill, releases a shard that never reached the provider,
and polls the rest. `collect` downloads the output and error files of finished batches into
the registry folder and ingests them (`ingest` module); a collected batch releases its keys,
so the next `submit` sends exactly the lines that failed, expired or never came back.

One bad batch never stops the others: a batch the provider answers 404 for, or whose input
shard is missing or unreadable, is recorded as broken (`Entry.problem`, shown by `status`
and `collect`; what it returned is still downloaded and kept) and keeps its keys until it
is collected on a later try or abandoned (`Registry.abandon`, `judgelab batch abandon`).
Failures of the endpoint as a whole (the key refused, no connection) still stop the command.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab.core import secrets, tables
from judgelab.errors import JudgeRunError
from judgelab.judges.batch import export as export_mod
from judgelab.judges.batch.formats import CHAT_URL, BatchFormatError
from judgelab.judges.batch.ingest import IngestReport, ingest_file, requests_of_input
from judgelab.judges.batch_registry import ABANDONED, TERMINAL, Entry, Registry
from judgelab.judges.cache import RequestCache
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.table import Planned

COMPLETION_WINDOW = "24h"
UPLOAD_TIMEOUT_S = 600.0


def open_client(spec: JudgeSpec) -> Any:
    """Return an `openai.OpenAI` client for the spec's `base_url` and key (from the env)."""
    import openai  # lazy: keeps `import judgelab.judges` light

    return openai.OpenAI(
        base_url=spec.base_url,
        api_key=spec.api_key(),
        max_retries=3,
        timeout=max(spec.timeout_s, UPLOAD_TIMEOUT_S),
    )


class BrokenBatch(JudgeRunError):
    """One batch cannot be polled or collected (404 upstream, or its input shard is missing).

    The other batches go on; `problem` is what `status` and `collect` show for it.
    """

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem


NOT_FOUND = 404


@contextlib.contextmanager
def api_errors(spec: JudgeSpec, doing: str) -> Iterator[None]:
    """Turn an SDK error into `JudgeRunError` naming the step; the key is scrubbed.

    A 404 (the provider does not know this batch or file) is `BrokenBatch`: it concerns one
    batch, not the endpoint.
    """
    import openai

    errors: list[type[BaseException]] = [openai.APIError]
    with contextlib.suppress(ImportError):
        import anthropic  # the optional SDK of Anthropic batches

        errors.append(anthropic.APIError)
    try:
        yield
    except tuple(errors) as exc:
        key = None
        with contextlib.suppress(Exception):
            key = spec.api_key()
        text = secrets.scrub(f"{type(exc).__name__}: {exc}", [key] if key else [])[:500]
        if getattr(exc, "status_code", None) == NOT_FOUND:
            raise BrokenBatch(f"{text} (while {doing})") from None
        raise JudgeRunError(
            f"batch API at {spec.endpoint_id} failed while {doing}: {text}. Every step done "
            "before is recorded; rerun the same command to go on"
        ) from None


def _update(entry: Entry, batch: Any) -> None:
    """Copy a provider batch object's state into `entry`."""
    entry.batch_id = batch.id
    entry.state = str(batch.status)
    entry.output_file_id = getattr(batch, "output_file_id", None)
    entry.error_file_id = getattr(batch, "error_file_id", None)
    counts = getattr(batch, "request_counts", None)
    if counts is not None:
        entry.request_counts = {
            k: int(getattr(counts, k, 0) or 0) for k in ("total", "completed", "failed")
        }
    errs = getattr(getattr(batch, "errors", None), "data", None) or []
    entry.errors = [secrets.scrub(f"line {e.line}: {e.code}: {e.message}", []) for e in errs][:20]


def _recover(entry: Entry, client: Any, registry: Registry) -> None:
    """Settle an entry a killed process left before the provider acknowledged its batch."""
    if entry.state == "submitting" and entry.input_file_id:
        for batch in client.batches.list(limit=100):
            if batch.input_file_id == entry.input_file_id:
                _update(entry, batch)  # created just before the kill: adopt it
                registry.save(entry)
                return
    entry.errors.append(f"never submitted (the process stopped while {entry.state})")
    entry.state, entry.collected = ABANDONED, True  # release its keys
    registry.save(entry)


def provider_of(client: Any) -> str:
    """Return the provider a client talks to ("openai" unless it says otherwise)."""
    return str(getattr(client, "provider", "openai"))


def _broken(entry: Entry, registry: Registry, problem: str) -> None:
    """Record why `entry` cannot be polled or collected (it keeps its keys)."""
    entry.problem = problem
    registry.save(entry)


def refresh(spec: JudgeSpec, client: Any, registry: Registry) -> list[Entry]:
    """Recover interrupted submissions and poll the judge's uncollected batches.

    Only the batches of the client's provider are polled (see `provider_of`). A batch the
    provider answers 404 for is recorded as broken (`Entry.problem`) and the others go on.
    """
    out = []
    for entry in registry.entries(spec.judge_id):
        if entry.collected or entry.provider != provider_of(client):
            continue
        try:
            with api_errors(spec, f"polling batch {entry.label}"):
                if entry.batch_id is None:
                    _recover(entry, client, registry)
                elif entry.state not in TERMINAL:
                    _update(entry, client.batches.retrieve(entry.batch_id))
                    entry.problem = None
                    registry.save(entry)
        except BrokenBatch as exc:
            _broken(entry, registry, exc.problem)
        out.append(entry)
    return out


def submit_shard(
    spec: JudgeSpec, todo: list[Planned], lines: list[bytes], client: Any, registry: Registry
) -> Entry:
    """Upload one shard and create its batch, recording each step before the next."""
    keys = [p.key for p in todo]
    entry = Entry(registry.new_id(), provider_of(client), spec.judge_id, spec.endpoint_id, keys)
    path = export_mod.write_shard(registry.path(entry.local_id, ".input.jsonl"), lines)
    registry.save(entry)
    with api_errors(spec, f"uploading {path}"), open(path, "rb") as fh:
        uploaded = client.files.create(file=(path.name, fh), purpose="batch")
    entry.input_file_id, entry.state = uploaded.id, "submitting"
    registry.save(entry)
    with api_errors(spec, f"creating the batch of {path.name}"):
        batch = client.batches.create(
            input_file_id=uploaded.id,
            endpoint=CHAT_URL,
            completion_window=COMPLETION_WINDOW,
            metadata={"judgelab_local_id": entry.local_id, "judgelab_judge": spec.judge_id[:500]},
        )
    _update(entry, batch)
    return registry.save(entry)


def submit(
    spec: JudgeSpec,
    todo: list[Planned],
    client: Any,
    registry: Registry,
    *,
    max_lines: int = export_mod.MAX_LINES,
    max_bytes: int = export_mod.MAX_BYTES,
) -> list[Entry]:
    """Submit `todo` (requests neither cached nor held) as batches of at most the limits."""
    entries = []
    lines = (export_mod.encode(export_mod.line_for("openai")(p)) for p in todo)
    start = 0  # shards keep the order of `todo`
    for part in export_mod.shard(lines, max_lines=max_lines, max_bytes=max_bytes):
        chunk = todo[start : start + len(part)]
        start += len(part)
        entries.append(submit_shard(spec, chunk, part, client, registry))
    return entries


def cancel(
    spec: JudgeSpec, client: Any, registry: Registry, batch: str | None = None
) -> list[Entry]:
    """Ask the provider to cancel the judge's running batches (or the one named)."""
    chosen = [registry.find(spec.judge_id, batch)] if batch else registry.entries(spec.judge_id)
    out = []
    for entry in chosen:
        if entry.collected or entry.batch_id is None or entry.state in TERMINAL:
            continue
        if entry.provider != provider_of(client):
            continue
        try:
            with api_errors(spec, f"cancelling batch {entry.batch_id}"):
                _update(entry, client.batches.cancel(entry.batch_id))
        except BrokenBatch as exc:  # not cancelled; `status` shows why
            _broken(entry, registry, exc.problem)
            continue
        out.append(registry.save(entry))
    return out


def download(spec: JudgeSpec, client: Any, file_id: str, path: Path) -> Path:
    """Download a provider file to `path` atomically (streamed; the paid answers are kept)."""
    with (
        api_errors(spec, f"downloading file {file_id}"),
        tables.atomic_path(path) as tmp,
        client.files.with_streaming_response.content(file_id) as resp,
        open(tmp, "wb") as fh,
    ):
        for chunk in resp.iter_bytes():
            fh.write(chunk)
    return path


@dataclass
class CollectReport:
    """What a collect did: batches collected, still running and broken, and the ingest."""

    collected: list[Entry] = field(default_factory=list)
    waiting: list[Entry] = field(default_factory=list)
    ingest: IngestReport = field(default_factory=IngestReport)
    missing: int = 0
    broken: list[Entry] = field(default_factory=list)

    @property
    def incomplete(self) -> int:
        """Return how many lines or batches did not come back (the exit status 1 counts)."""
        return self.ingest.error_lines + len(self.ingest.unknown) + self.missing + len(self.broken)

    def format(self) -> str:
        """Return the report as text (the ingest counts only when a batch was collected)."""
        lines = [f"batches collected  {len(self.collected)}"]
        for e in self.collected:
            lines.append(f"  {e.label}: {e.state}, {e.result}")
            lines += [f"    {err}" for err in e.errors[:3]]
        lines.append(f"batches running    {len(self.waiting)}")
        for e in self.waiting:
            lines.append(f"  {e.label}: {e.state} {e.request_counts}")
        lines.append(f"batches broken     {len(self.broken)}")
        for e in self.broken:
            lines.append(f"  {e.label}: {e.problem}")
        if self.broken:
            lines.append(
                "  a broken batch keeps its requests and is tried again by every collect; "
                "`judgelab batch abandon ID` gives them to the next submit"
            )
        if self.collected:
            lines.append(self.ingest.format())
            lines.append(
                f"  no line returned   {self.missing} (not cached; the next submit sends them "
                "again)"
            )
        return "\n".join(lines)


def _downloaded(spec: JudgeSpec, entry: Entry, client: Any, registry: Registry) -> list[Path]:
    """Return the entry's output and error files, downloading those not on disk yet."""
    files = []
    for kind, file_id in (("output", entry.output_file_id), ("errors", entry.error_file_id)):
        if file_id:
            path = registry.path(entry.local_id, f".{kind}.jsonl")
            files.append(path if path.exists() else download(spec, client, file_id, path))
    return files


def collect_entry(
    spec: JudgeSpec, entry: Entry, client: Any, registry: Registry, cache: RequestCache
) -> tuple[IngestReport, int]:
    """Download and ingest one finished batch; mark it collected (releasing its keys).

    What came back is downloaded first and kept (a file already downloaded is reused).

    Raises:
        BrokenBatch: a file is gone upstream (404), or the input shard is missing.
        BatchFormatError: the input shard or an output file is not readable.
    """
    files = _downloaded(spec, entry, client, registry)
    shard = registry.path(entry.local_id, ".input.jsonl")
    if not shard.exists():
        kept = (
            f"; what came back is kept in {', '.join(map(str, files))} (`judgelab batch "
            "ingest` reads it against the plan)"
            if files
            else ""
        )
        raise BrokenBatch(
            f"input shard {shard} is missing, so its answers cannot be checked against "
            f"their requests{kept}"
        )
    requests = requests_of_input(shard, entry.endpoint)
    report = IngestReport()
    for path in files:
        report.add(ingest_file(path, requests, cache, max_response_bytes=spec.max_response_bytes))
    missing = sum(1 for k in entry.keys if k not in report.seen)
    entry.result = {
        "stored": report.stored,
        "already_cached": report.already_cached,
        "error_lines": report.error_lines,
        "unknown": len(report.unknown),
        "missing": missing,
        "conflicts": len(report.conflicts),
    }
    entry.collected, entry.problem = True, None
    registry.save(entry)
    return report, missing


def collect(
    spec: JudgeSpec, client: Any, registry: Registry, cache: RequestCache
) -> CollectReport:
    """Poll the judge's batches and collect every finished one (a collected one is skipped).

    A batch that cannot be polled or collected is reported as broken; the others go on.
    """
    out = CollectReport()
    for entry in refresh(spec, client, registry):
        if entry.collected:  # abandoned by recovery: nothing to download
            out.collected.append(entry)
        elif entry.terminal:
            try:
                report, missing = collect_entry(spec, entry, client, registry, cache)
            except (BrokenBatch, BatchFormatError) as exc:
                _broken(entry, registry, exc.problem if isinstance(exc, BrokenBatch) else str(exc))
                out.broken.append(entry)
                continue
            out.ingest.add(report)
            out.missing += missing
            out.collected.append(entry)
        elif entry.broken:
            out.broken.append(entry)
        else:
            out.waiting.append(entry)
    return out


__all__ = [
    "COMPLETION_WINDOW",
    "BrokenBatch",
    "CollectReport",
    "api_errors",
    "cancel",
    "collect",
    "collect_entry",
    "download",
    "open_client",
    "refresh",
    "submit",
    "submit_shard",
]
