"""Export a judge's uncached requests as batch JSONL shards, and price them at batch rates.

`pending` plans exactly what the online runner (`judgelab.judges.runner.run`) would request
for the same judge, items, splits, limit and conditions, minus the keys already cached and
the keys held by batches still in flight. `write_shards` writes the lines in shards of at most
`max_lines` lines and `max_bytes` bytes (the OpenAI Batch API's limits: 50,000 and 200 MB),
each file written atomically. `estimate` is the batch `--dry-run`.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.core import tables
from judgelab.core.names import safe_name
from judgelab.judges import runner
from judgelab.judges import table as table_mod
from judgelab.judges.batch import formats
from judgelab.judges.cache import RequestCache
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.summary import estimate_tokens

MAX_LINES = 50_000
MAX_BYTES = 200 * 1024 * 1024
DEFAULT_DISCOUNT = 0.5
PREFIX_KIND = "shard prefix"


@dataclass
class Pending:
    """What a batch run would send: the plan, and its requests neither cached nor in flight."""

    plan: table_mod.Plan
    todo: list[table_mod.Planned]
    cached: set[str]
    held: set[str]

    @property
    def in_flight(self) -> int:
        """Return how many planned requests wait in submitted batches (not cached yet)."""
        held, cached = self.held, self.cached
        return sum(1 for r in self.plan.requests if r.key in held and r.key not in cached)


def plan_requests(
    items: pd.DataFrame,
    spec: JudgeSpec,
    *,
    splits: list[str] | None = None,
    limit: int | None = None,
    conditions: list[str] | None = None,
) -> table_mod.Plan:
    """Return the plan the online runner makes for the same arguments (nothing is called).

    Raises:
        ValueError: an offline baseline (it makes no requests), an unknown split or condition.
    """
    if spec.is_offline:
        raise ValueError(f"judge {spec.judge_id} is an offline baseline; it makes no requests")
    judge = runner.resolve_run(items, spec, conditions)
    items = runner.with_condition_references(items, spec, conditions)
    chosen = runner.select(items, splits=splits, limit=limit)
    return table_mod.plan_for(chosen, judge)


def pending(
    items: pd.DataFrame,
    spec: JudgeSpec,
    cache: RequestCache,
    *,
    held: Collection[str] = (),
    splits: list[str] | None = None,
    limit: int | None = None,
    conditions: list[str] | None = None,
) -> Pending:
    """Return the planned requests (distinct keys) not cached and not in `held`."""
    p = plan_requests(items, spec, splits=splits, limit=limit, conditions=conditions)
    have = cache.present(p.keys)
    held = set(held)
    todo = {r.key: r for r in p.requests if r.key not in have and r.key not in held}
    return Pending(p, list(todo.values()), have, held)


def line_for(fmt: str) -> Callable[[table_mod.Planned], dict[str, Any]]:
    """Return the line maker of a batch format ("openai" or "anthropic")."""
    if fmt not in formats.FORMATS:
        raise ValueError(f"unknown batch format {fmt!r}; known: {list(formats.FORMATS)}")
    return formats.openai_line if fmt == "openai" else formats.anthropic_line


def encode(line: dict[str, Any]) -> bytes:
    """Return one JSONL line as UTF-8 bytes, newline included."""
    return (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")


def shard(
    lines: Iterable[bytes], *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES
) -> Iterator[list[bytes]]:
    """Group encoded lines into shards of at most `max_lines` lines and `max_bytes` bytes.

    Raises:
        ValueError: bad limits, or one line alone is over `max_bytes`.
    """
    if max_lines < 1 or max_bytes < 1:
        raise ValueError(f"shard limits must be positive, got {max_lines} lines, {max_bytes} B")
    part: list[bytes] = []
    size = 0
    for line in lines:
        if len(line) > max_bytes:
            raise ValueError(f"one request is {len(line)} bytes, over the shard limit {max_bytes}")
        if part and (len(part) >= max_lines or size + len(line) > max_bytes):
            yield part
            part, size = [], 0
        part.append(line)
        size += len(line)
    if part:
        yield part


def write_shard(path: Path, lines: list[bytes]) -> Path:
    """Write one shard atomically (a temporary file renamed over `path`)."""
    with tables.atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.writelines(lines)
    return path


def shard_name(prefix: str, index: int) -> str:
    """Return the file name of shard `index` of an export with `prefix`.

    Raises:
        UnsafeNameError: `prefix` is not one safe path component (`safe_name`).
    """
    return f"{safe_name(PREFIX_KIND, prefix, where='--prefix')}-{index:05d}.jsonl"


def write_shards(
    todo: list[table_mod.Planned],
    out_dir: str | os.PathLike[str],
    *,
    fmt: str = "openai",
    prefix: str = "requests",
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
) -> list[Path]:
    """Write `todo` as `<out_dir>/<prefix>-00000.jsonl`, ...; return the files written.

    Shards of an earlier export with the same prefix beyond the ones written are removed, so
    the folder holds exactly this export; nothing else is touched (the prefix is a checked
    name and is matched literally, never as a pattern).

    Raises:
        UnsafeNameError: `prefix` is not one safe path component (checked before writing).
    """
    shard_name(prefix, 0)
    out = Path(out_dir)
    make = line_for(fmt)
    written: list[Path] = []
    lines = (encode(make(p)) for p in todo)
    for i, part in enumerate(shard(lines, max_lines=max_lines, max_bytes=max_bytes)):
        written.append(write_shard(out / shard_name(prefix, i), part))
    keep = set(written)
    ours = re.compile(re.escape(prefix) + r"-[0-9]{5}\.jsonl")
    for stale in out.glob(glob.escape(prefix) + "-*.jsonl"):
        if ours.fullmatch(stale.name) and stale not in keep and stale.is_file():
            stale.unlink()
    return written


@dataclass
class BatchEstimate:
    """What a batch submission would send and cost at batch rates (`--dry-run`)."""

    planned: int
    cached: int
    in_flight: int
    to_submit: int
    not_applicable: int
    prompt_tokens: int
    max_completion_tokens: int
    cost_usd: float | None
    rates: str

    def format(self) -> str:
        """Return the dry-run report."""
        cost = (
            "unknown (no prices in spec or flags)"
            if self.cost_usd is None
            else f"<= ${self.cost_usd:.4f} at {self.rates}"
        )
        return "\n".join(
            [
                f"requests planned        {self.planned}",
                f"already cached          {self.cached}",
                f"in submitted batches    {self.in_flight}",
                f"to submit               {self.to_submit}",
                f"not applicable          {self.not_applicable} (item, condition) pairs",
                f"est. prompt tokens      {self.prompt_tokens} (to submit; ~4 chars/token)",
                f"max completion tokens   {self.max_completion_tokens} (to submit x max_tokens)",
                f"est. cost               {cost}",
            ]
        )


def batch_prices(
    spec: JudgeSpec,
    *,
    discount: float = DEFAULT_DISCOUNT,
    price_in: float | None = None,
    price_out: float | None = None,
) -> tuple[float | None, float | None, str]:
    """Return the batch prices (USD per 1M tokens, in and out) and how they were set.

    An explicit batch price wins; a price not given is the spec's times `discount` (0.5:
    half price, the OpenAI and Anthropic batch rate); None when neither is known.
    """
    if not 0 <= discount <= 1:
        raise ValueError(f"batch discount must be in [0, 1], got {discount}")

    def one(given: float | None, listed: float | None) -> float | None:
        if given is not None:
            return given
        return None if listed is None else listed * discount

    pin, pout = one(price_in, spec.price_in), one(price_out, spec.price_out)
    if price_in is not None and price_out is not None:
        rates = "batch prices given"
    elif price_in is not None or price_out is not None:
        rates = f"the batch price given and {discount:g} x the spec's other price"
    else:
        rates = f"{discount:g} x the spec's prices"
    return pin, pout, (rates if pin is not None and pout is not None else "no prices")


def estimate(
    work: Pending,
    spec: JudgeSpec,
    *,
    discount: float = DEFAULT_DISCOUNT,
    price_in: float | None = None,
    price_out: float | None = None,
) -> BatchEstimate:
    """Count and price what `work` would submit, at batch rates; call nothing."""
    pin, pout, rates = batch_prices(
        spec, discount=discount, price_in=price_in, price_out=price_out
    )
    prompt = sum(estimate_tokens(r.request["messages"]) for r in work.todo)
    completion = spec.max_tokens * len(work.todo)
    cost = None
    if pin is not None and pout is not None:
        cost = round((prompt * pin + completion * pout) / 1e6, 12)
    return BatchEstimate(
        planned=len(work.plan.requests),
        cached=sum(1 for r in work.plan.requests if r.key in work.cached),
        in_flight=work.in_flight,
        to_submit=len(work.todo),
        not_applicable=len(work.plan.skipped),
        prompt_tokens=prompt,
        max_completion_tokens=completion,
        cost_usd=cost,
        rates=rates,
    )


__all__ = [
    "DEFAULT_DISCOUNT",
    "MAX_BYTES",
    "MAX_LINES",
    "BatchEstimate",
    "Pending",
    "batch_prices",
    "encode",
    "estimate",
    "line_for",
    "pending",
    "plan_requests",
    "shard",
    "shard_name",
    "write_shard",
    "write_shards",
]
