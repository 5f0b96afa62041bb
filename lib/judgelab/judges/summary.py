"""What a judge run reports: the run summary, the dry-run estimate and the run's result."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the judge path loads no pandas (issue 38, 3)
    import pandas as pd


HELD = (
    "in batches not collected yet, so not requested: `judgelab batch collect` reads them, "
    "--request-held requests them online"
)


@dataclass
class Summary:
    """What a run did; `format()` is the text printed at the end of `judgelab judge`."""

    judge: str
    benchmark: str
    planned: int
    cache_hits: int
    requested: int
    answered: int
    failed: int
    retries: int
    not_applicable: int
    rows: int
    invalid: int
    pending: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    wall_s: float
    request_s: float = 0.0
    retry_reasons: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    # answers kept but flagged (malformed usage recorded as unknown, unencodable text
    # replaced, content that is not text), by request key; and cached answers evicted by
    # `--evict-invalid`
    flagged: dict[str, str] = field(default_factory=dict)
    evicted: int = 0
    path: str | None = None
    held: int = 0  # keys held by batches not collected yet: not requested (issue 32 item 9)
    from_other_runs: int = 0  # keys another run on the cache was fetching (issue 32 item 6)

    def format(self) -> str:
        """Return a human-readable multi-line summary."""
        cost = "unknown (no prices in spec)" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        reasons = ", ".join(f"{k}={v}" for k, v in sorted(self.retry_reasons.items()))
        lines = [
            f"judge {self.judge} on {self.benchmark}",
            f"  requests planned   {self.planned}",
            f"  cache hits         {self.cache_hits}",
            f"  requests made      {self.requested} ({self.answered} answered, "
            f"{self.failed} failed)",
            f"  retries            {self.retries}" + (f" ({reasons})" if reasons else ""),
            f"  not applicable     {self.not_applicable} (item, condition) pairs",
            f"  judgment rows      {self.rows} ({self.invalid} invalid verdicts, raw output "
            f"kept; {self.pending} pending)",
            f"  tokens (new calls) {self.prompt_tokens} prompt + {self.completion_tokens} "
            "completion",
            f"  cost (new calls)   {cost}",
            f"  wall time          {self.wall_s:.1f} s ({self.request_s:.1f} s of requests)",
        ]
        if self.from_other_runs:
            lines.append(
                f"  from another run   {self.from_other_runs} (in flight in another run on this "
                "cache: its answers read, not paid twice)"
            )
        if self.held:
            lines.append(f"  held by batches    {self.held} ({HELD})")
        if self.evicted:
            lines.append(f"  evicted            {self.evicted} invalid cached answer(s)")
        if self.flagged:
            lines.append(
                f"  flagged answers    {len(self.flagged)} (kept; usage unknown, text repaired or "
                "not text; --evict-invalid requests them again)"
            )
        if self.path:
            lines.append(f"  table              {self.path}")
        for key, err in list(self.errors.items())[:5]:
            lines.append(f"  FAILED {key[:12]}: {err}")
        for key, problem in list(self.flagged.items())[:5]:
            lines.append(f"  FLAGGED {key[:12]}: {problem}")
        if self.failed:
            lines.append(
                f"  {self.failed} request(s) failed; rerun the same command to retry them"
            )
        return "\n".join(lines)


def from_request(spec: Any, asked: Any, written: list[Path], t0: float, **counted: Any) -> Summary:
    """The summary of a run from its request phase (`requesting.Requested`) and its table.

    `counted` holds what the caller counts from its own table: benchmark, planned,
    not_applicable, rows, invalid, pending and cost_usd.
    """
    import time

    stats = asked.stats
    return Summary(
        judge=spec.judge_id,
        cache_hits=asked.hits,
        requested=stats.requested,
        answered=stats.answered,
        failed=stats.failed,
        retries=stats.retries,
        prompt_tokens=stats.prompt_tokens,
        completion_tokens=stats.completion_tokens,
        wall_s=time.monotonic() - t0,
        request_s=asked.request_s,
        retry_reasons=stats.retry_reasons,
        errors=stats.errors,
        flagged=stats.flagged,
        evicted=asked.evicted,
        path=", ".join(map(str, written)) or None,
        held=asked.held,
        from_other_runs=asked.from_other_runs,
        **counted,
    )


@dataclass
class RunResult:
    """What `run` produced: the table, its diagnostics, the summary and where it was written."""

    judgments: pd.DataFrame
    details: pd.DataFrame
    summary: Summary
    paths: list[Path]


@dataclass
class Estimate:
    """What a run would do (`--dry-run`); token counts are estimates, cost an upper bound."""

    planned: int
    cached: int
    to_request: int
    not_applicable: int
    prompt_tokens: int
    max_completion_tokens: int
    cost_usd: float | None
    held: int = 0  # keys held by batches not collected yet: not counted in `to_request`

    def as_row(self) -> dict[str, Any]:
        """Return the estimate as table columns (cost NaN when the spec has no prices)."""
        return {
            "planned": self.planned,
            "cached": self.cached,
            "to_request": self.to_request,
            "not_applicable": self.not_applicable,
            "est_prompt_tokens": self.prompt_tokens,
            "max_completion_tokens": self.max_completion_tokens,
            "est_cost_usd": math.nan if self.cost_usd is None else self.cost_usd,
        }

    def format(self) -> str:
        """Return the dry-run report."""
        cost = (
            "unknown (no prices in spec)"
            if self.cost_usd is None
            else f"<= ${self.cost_usd:.4f} (prompt estimate + max_tokens per request)"
        )
        held = [f"held by batches         {self.held} ({HELD})"] if self.held else []
        return "\n".join(
            [
                f"requests planned        {self.planned}",
                f"already cached          {self.cached}",
                *held,
                f"to request              {self.to_request}",
                f"not applicable          {self.not_applicable} (item, condition) pairs",
                f"est. prompt tokens      {self.prompt_tokens} (uncached; ~4 chars/token)",
                f"max completion tokens   {self.max_completion_tokens} (uncached x max_tokens)",
                f"est. cost               {cost}",
            ]
        )


def estimate_tokens(messages: list[dict[str, str]]) -> int:
    """Estimate the prompt tokens of a chat request: ceil(chars / 4) + 4 per message + 3.

    The 4-characters-per-token rule is OpenAI's rule of thumb for English text; the per-message
    and per-reply overheads follow OpenAI's chat-format accounting. It needs no tokenizer.

    >>> estimate_tokens([{"role": "user", "content": "x" * 400}])  # 100 + 4 + 3
    107
    """
    chars = sum(len(m.get("content") or "") for m in messages)
    return math.ceil(chars / 4) + 4 * len(messages) + 3


def summary_json(summary: Summary) -> str:
    """Return the summary as JSON (for logs and notebooks)."""
    return json.dumps(summary.__dict__, sort_keys=True, default=str)


__all__ = ["HELD", "Estimate", "RunResult", "Summary", "estimate_tokens", "summary_json"]
