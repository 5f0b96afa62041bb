"""The batch back-end of a judge run: collect what came back, submit what is missing, build.

`submit_missing` is `judgelab batch submit`: under the registry lock it first collects the
judge's finished batches (so failed, expired and missing lines are free to go again), then
submits every planned request that is neither cached nor held by a batch in flight.
`run_batch` is `judgelab judge --backend batch`: the same, optionally waiting for the batches
(`wait=True`), then it builds the judge's table from the cache and writes it exactly as the
online runner does (same lock, merge and atomic write), so both back-ends give one table.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.errors import check_choice
from judgelab.judges import runner, store
from judgelab.judges.batch import export as export_mod
from judgelab.judges.batch import openai_batches as api
from judgelab.judges.batch_registry import Entry, Registry
from judgelab.judges.cache import RequestCache, opened
from judgelab.judges.rows import Built
from judgelab.judges.spec import JudgeSpec

PROVIDERS = ("openai", "anthropic")


def open_client(spec: JudgeSpec, provider: str = "openai") -> Any:
    """Return the batch client of `provider`: the openai SDK, or the Anthropic adapter."""
    check_choice("provider", provider, PROVIDERS)
    if provider == "anthropic":
        from judgelab.judges.batch import anthropic_batches

        return anthropic_batches.open_client(spec)
    return api.open_client(spec)


@dataclass
class SubmitReport:
    """What one submit did: the collect before it, the batches it created, what was planned."""

    collected: api.CollectReport
    submitted: list[Entry]
    work: export_mod.Pending

    def format(self) -> str:
        """Return the report as text."""
        sent = sum(len(e.keys) for e in self.submitted)
        cached = sum(1 for r in self.work.plan.requests if r.key in self.work.cached)
        lines = [
            f"judge {self.work.plan.judge.spec.judge_id if self.work.plan.judge else '?'}",
            f"requests planned   {len(self.work.plan.requests)}",
            f"already cached     {cached}",
            f"in earlier batches {self.work.in_flight}",
            f"submitted now      {sent} request(s) in {len(self.submitted)} batch(es)",
        ]
        lines += [f"  {e.batch_id}: {e.state}, {len(e.keys)} requests" for e in self.submitted]
        lines.append("collected before submitting:")
        lines.append(self.collected.format())
        return "\n".join(lines)


def submit_missing(
    items: pd.DataFrame,
    spec: JudgeSpec,
    *,
    cache: RequestCache,
    client: Any = None,
    registry: Registry | None = None,
    splits: list[str] | None = None,
    limit: int | None = None,
    conditions: list[str] | None = None,
    max_lines: int = export_mod.MAX_LINES,
    max_bytes: int = export_mod.MAX_BYTES,
    provider: str = "openai",
) -> SubmitReport:
    """Collect the judge's finished batches, then submit what is neither cached nor held."""
    store.check_identity(items, spec)  # a refused judge submits (and pays) nothing
    export_mod.plan_requests(items, spec, splits=splits, limit=limit, conditions=conditions)
    reg = registry or Registry()
    client = client if client is not None else open_client(spec, provider)
    with reg.lock():
        collected = api.collect(spec, client, reg, cache)
        work = export_mod.pending(
            items,
            spec,
            cache,
            held=reg.held_keys(spec.judge_id),
            splits=splits,
            limit=limit,
            conditions=conditions,
        )
        entries = api.submit(
            spec, work.todo, client, reg, max_lines=max_lines, max_bytes=max_bytes
        )
    return SubmitReport(collected, entries, work)


def collect(
    spec: JudgeSpec,
    *,
    cache: RequestCache,
    client: Any = None,
    registry: Registry | None = None,
    provider: str = "openai",
) -> api.CollectReport:
    """Poll the judge's batches and ingest every finished one (under the registry lock)."""
    reg = registry or Registry()
    client = client if client is not None else open_client(spec, provider)
    with reg.lock():
        return api.collect(spec, client, reg, cache)


def write_table(
    items: pd.DataFrame,
    spec: JudgeSpec,
    cache: RequestCache,
    conditions: list[str] | None = None,
) -> tuple[Built, list[Path]]:
    """Build the judge's table over `items` from the cache and write it as `runner.run` does."""
    with store.table_lock(items, spec.judge_id):
        built = runner.build_from_cache(items, spec, conditions=conditions, cache=cache)
        store.check_identity(items, spec)
        built = store.merge_existing(built, items, spec.judge_id)
        written = store.write(built, spec.judge_id) if len(built.judgments) else []
    return built, written


@dataclass
class BatchRunResult:
    """What `run_batch` did, the table it built and where it was written."""

    submits: list[SubmitReport] = field(default_factory=list)
    collects: list[api.CollectReport] = field(default_factory=list)
    built: Built | None = None
    paths: list[Path] = field(default_factory=list)
    held: int = 0

    def format(self) -> str:
        """Return the run's summary."""
        out = [s.format() for s in self.submits]
        out += ["collected:\n" + c.format() for c in self.collects]
        if self.built is not None:
            d = self.built.details
            pending = int((d["status"] == "pending").sum())
            out.append(f"judgment rows      {len(self.built.judgments)} ({pending} pending)")
        out.append(f"still in batches   {self.held} request(s); rerun to collect them")
        out += [f"table              {p}" for p in self.paths]
        return "\n".join(out)


def run_batch(
    items: pd.DataFrame,
    spec: JudgeSpec,
    *,
    splits: list[str] | None = None,
    limit: int | None = None,
    conditions: list[str] | None = None,
    cache: RequestCache | None = None,
    client: Any = None,
    registry: Registry | None = None,
    wait: bool = False,
    poll_s: float = 30.0,
    max_wait_s: float | None = None,
    write_tables: bool = True,
    max_lines: int = export_mod.MAX_LINES,
    max_bytes: int = export_mod.MAX_BYTES,
    provider: str = "openai",
) -> BatchRunResult:
    """`judge --backend batch`: collect, submit what is missing, (wait,) build and write.

    With `wait`, polls every `poll_s` seconds until no batch of the judge is in flight (or
    `max_wait_s` passed), collecting each as it finishes; lines that failed are submitted by
    the next run, and a broken batch is reported, not waited for. Without it, the table holds
    what the cache holds now.
    """
    reg = registry or Registry()
    client = client if client is not None else open_client(spec, provider)
    out = BatchRunResult()
    t0 = time.monotonic()
    with opened(cache) as c:
        out.submits.append(
            submit_missing(
                items, spec, cache=c, client=client, registry=reg, splits=splits,
                limit=limit, conditions=conditions, max_lines=max_lines, max_bytes=max_bytes,
                provider=provider,
            )
        )  # fmt: skip
        while wait and reg.running(spec.judge_id):  # a broken batch is not waited for
            if max_wait_s is not None and time.monotonic() - t0 > max_wait_s:
                break
            time.sleep(poll_s)
            out.collects.append(
                collect(spec, cache=c, client=client, registry=reg, provider=provider)
            )
        out.held = len(reg.held_keys(spec.judge_id))
        if write_tables:
            out.built, out.paths = write_table(items, spec, c, conditions)
        else:
            out.built = runner.build_from_cache(items, spec, conditions=conditions, cache=c)
    return out


def judge_batch(
    items: pd.DataFrame,
    spec: JudgeSpec,
    *,
    splits: list[str] | None = None,
    limit: int | None = None,
    conditions: list[str] | None = None,
    dry_run: bool = False,
    wait: bool = False,
    poll_s: float = 30.0,
    discount: float = export_mod.DEFAULT_DISCOUNT,
) -> tuple[str, int]:
    """`judgelab judge --backend batch`: return the text to print and the exit status.

    `dry_run`: count and price at batch rates (`discount` of the spec's prices); send
    nothing. Otherwise `run_batch` with the default cache and registry. Exit 1 when lines
    came back as errors or missing (the next run sends them again) or a batch is broken,
    else 0.
    """
    if dry_run:
        with opened(None) as c:
            held = Registry().held_keys(spec.judge_id)
            sel = {"splits": splits, "limit": limit, "conditions": conditions}
            work = export_mod.pending(items, spec, c, held=held, **sel)
        est = export_mod.estimate(work, spec, discount=discount)
        head = f"dry run: judge {spec.judge_id} at batch rates (nothing is sent)"
        return head + "\n" + est.format(), 0
    result = run_batch(
        items, spec, splits=splits, limit=limit, conditions=conditions, wait=wait, poll_s=poll_s
    )
    reports = [s.collected for s in result.submits] + result.collects
    bad = sum(r.incomplete for r in reports)
    return result.format(), 1 if bad else 0


__all__ = [
    "BatchRunResult",
    "PROVIDERS",
    "judge_batch",
    "open_client",
    "SubmitReport",
    "collect",
    "opened",
    "run_batch",
    "submit_missing",
    "write_table",
]
