"""Plan a judge's requests and build its judgment table from cached responses (pure).

`plan(items, spec)` lists every (item, condition, order, sample) the judge must answer, with
the exact request and its cache key. `build(items, spec, responses)` turns cached responses
into a judgments table; it calls nothing and reads no clock, so the table is a pure function
of the items, the spec and the cache: a rerun after kill -9 gives an identical table.

The cached request holds the endpoint (base URL without credentials or query), the model,
the messages and the sampling params. Sample k > 0 of a self-consistency run adds
`seed = (spec.seed or 0) + k` so that every sample is a distinct request; sample 0 is the same
request as a single run, so raising `n` reuses what is cached.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import pandas as pd

from judgelab.core import schema
from judgelab.judges import cache as cache_mod
from judgelab.judges import templates
from judgelab.judges.parsers import Parsed
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.templates.base import ItemView, NotApplicable, Template

KEY_COLUMNS = ["benchmark", "split", "item_id", "condition", "order", "sample"]
DETAIL_COLUMNS = [
    *KEY_COLUMNS,
    "request_key",
    "status",
    "finish_reason",
    "n_verdict_tokens",
    "note",
]


@dataclass(frozen=True)
class Planned:
    """One request a judge must answer: where its row goes, what is sent, and its key."""

    benchmark: str
    split: str
    item_id: str
    condition: str
    order: int
    sample: int
    request: dict[str, Any]
    key: str
    item_index: int

    def payload(self) -> dict[str, Any]:
        """Return the body sent to the chat completions endpoint (no endpoint field)."""
        return {k: v for k, v in self.request.items() if k != "endpoint"}


class Skipped(NamedTuple):
    """An (item, condition) the template cannot build a prompt for, and why."""

    benchmark: str
    split: str
    item_id: str
    condition: str
    reason: str


class Plan(NamedTuple):
    """All requests of a judge over a benchmark, plus what does not apply."""

    requests: list[Planned]
    skipped: list[Skipped]

    @property
    def keys(self) -> list[str]:
        """Return the distinct cache keys, in plan order."""
        return list(dict.fromkeys(p.key for p in self.requests))


class Built(NamedTuple):
    """A judgment table and one diagnostics row per planned (or skipped) judgment.

    `details` has `benchmark, split, item_id, condition, order, sample, request_key,
    status` (answered | pending | not_applicable), `finish_reason`, `n_verdict_tokens`
    and `note` (parser remarks such as conflicting verdict tokens, truncation, or why an
    item does not apply).
    """

    judgments: pd.DataFrame
    details: pd.DataFrame


def item_records(items: pd.DataFrame) -> list[dict[str, Any]]:
    """Return the items as dicts with None for missing values."""
    obj = items.astype(object)
    return obj.where(items.notna(), None).to_dict("records")


def conditions_for(
    spec: JudgeSpec, template: Template, conditions: Iterable[str] | None = None
) -> list[str]:
    """Return the conditions to run: the given ones, else the spec's, else the template's.

    Raises:
        ValueError: a condition key or value the template does not take.
    """
    chosen = list(conditions) if conditions else list(spec.conditions or ())
    chosen = chosen or list(template.default_conditions)
    for c in chosen:
        template.check_condition(c)
    return list(dict.fromkeys(chosen))


def _expand(condition: str, item_task: str, template: Template) -> list[str]:
    """Add `candidate=pos/neg` when a single-response template grades a pairwise item."""
    if item_task == "pairwise" and not template.pairwise:
        base = templates.parse_condition(condition)
        if "candidate" in base:
            return [condition]
        return [
            templates.format_condition({**base, "candidate": which}) for which in ("pos", "neg")
        ]
    return [condition]


def plan(
    items: pd.DataFrame,
    spec: JudgeSpec,
    *,
    conditions: Iterable[str] | None = None,
) -> Plan:
    """List every request `spec` must answer over `items` (pure; nothing is called).

    Args:
        items: An items table.
        spec: A remote judge spec (offline baselines make no requests).
        conditions: Conditions to run (default: the spec's, else the template's).
    """
    if spec.is_offline:
        raise ValueError(f"judge {spec.judge_id} is an offline baseline; it makes no requests")
    template = templates.get(str(spec.template))
    conds = conditions_for(spec, template, conditions)
    sampling = spec.sampling()
    requests: list[Planned] = []
    skipped: list[Skipped] = []
    for idx, row in enumerate(item_records(items)):
        view = ItemView(row)
        where = (str(row["benchmark"]), str(row["split"]), str(row["item_id"]))
        task = str(row["task"])
        if not template.applies_to(task):
            skipped.append(Skipped(*where, ",".join(conds), f"template is not for {task} items"))
            continue
        for base in conds:
            for cond in _expand(base, task, template):
                parsed_cond = templates.parse_condition(cond)
                orders = spec.orders if template.pairwise else (0,)
                try:
                    messages = {o: template.build(view, o, parsed_cond) for o in orders}
                except NotApplicable as exc:
                    skipped.append(Skipped(*where, cond, str(exc)))
                    continue
                for order in orders:
                    for sample in range(spec.n):
                        request = request_for(spec, messages[order], sample, sampling=sampling)
                        requests.append(
                            Planned(
                                *where,
                                condition=cond,
                                order=order,
                                sample=sample,
                                request=request,
                                key=cache_mod.request_key(request),
                                item_index=idx,
                            )
                        )
    return Plan(requests, skipped)


def request_for(
    spec: JudgeSpec,
    messages: list[dict[str, str]],
    sample: int,
    *,
    sampling: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the cached request for one sample (endpoint + model + messages + sampling).

    `sampling`: `spec.sampling()` computed once by a caller that builds many requests.
    """
    request: dict[str, Any] = {
        "endpoint": spec.endpoint_id,
        "model": spec.model,
        "messages": messages,
        **(spec.sampling() if sampling is None else sampling),
    }
    if sample > 0:
        request["seed"] = (spec.seed or 0) + sample
    return request


def position_to_chosen(position: str | None, order: int) -> str | None:
    """Map a position verdict (A/B/tie) to the un-swapped response (pos/neg/tie).

    >>> position_to_chosen("A", 0), position_to_chosen("A", 1), position_to_chosen("tie", 1)
    ('pos', 'neg', 'tie')
    """
    if position == "tie":
        return "tie"
    if position not in ("A", "B"):
        return None
    first = "pos" if order == 0 else "neg"
    second = "neg" if order == 0 else "pos"
    return first if position == "A" else second


def judge_row(
    template: Template | None,
    view: ItemView,
    parsed: Parsed,
    *,
    order: int,
    condition: str,
    pairwise: bool,
) -> dict[str, Any]:
    """Return `verdict, valid, chosen, correct` for one parsed output (shared rules).

    `correct` is null when the item has no gold, when the row grades one response of a
    pairwise item (`candidate=` condition), or when the verdict is not comparable to gold
    (scores, generations); otherwise `valid and chosen == gold` (pairwise) or
    `valid and verdict == gold` (single), unless the template defines its own rule.
    """
    valid = bool(parsed.valid and parsed.verdict is not None)
    verdict = parsed.verdict
    chosen = position_to_chosen(verdict, order) if (pairwise and valid) else None
    if pairwise and valid and chosen is None:
        valid = False
    gold = view.text("gold")
    cond = templates.parse_condition(condition)
    if gold is None or "candidate" in cond:
        correct = None
    elif template is not None and not template.gold_comparable:
        correct = None
    elif template is not None and template.correct is not None:
        correct = template.correct(parsed._replace(valid=valid), view)
    elif pairwise:
        correct = bool(valid and chosen == gold)
    else:
        correct = bool(valid and verdict == gold)
    return {"verdict": verdict, "valid": valid, "chosen": chosen, "correct": correct}


def cost_usd(spec: JudgeSpec, prompt_tokens: Any, completion_tokens: Any) -> float | None:
    """Return the cost of one response from the spec's prices (None when unknown).

    >>> from judgelab.judges.spec import JudgeSpec
    >>> s = JudgeSpec(endpoint="openai-compatible", model="m", template="cjb.workflow",
    ...               price_in=0.15, price_out=0.60)
    >>> cost_usd(s, 1000, 200)  # (1000*0.15 + 200*0.60) / 1e6
    0.00027
    """
    if spec.price_in is None or spec.price_out is None:
        return None
    if prompt_tokens is None or completion_tokens is None:
        return None
    return round((prompt_tokens * spec.price_in + completion_tokens * spec.price_out) / 1e6, 12)


def safe_parse(template: Template, output: str | None, view: ItemView, cond: str) -> Parsed:
    """Parse an output; a parser exception becomes an invalid verdict with a note."""
    try:
        return template.parse(output, view, templates.parse_condition(cond))
    except Exception as exc:  # a parser bug must not lose the raw output
        return Parsed(None, False, 0, f"parser error: {type(exc).__name__}: {exc}")


def build(
    items: pd.DataFrame,
    spec: JudgeSpec,
    responses: Mapping[str, Mapping[str, Any]],
    *,
    conditions: Iterable[str] | None = None,
    the_plan: Plan | None = None,
) -> Built:
    """Build the judgment table of `spec` over `items` from cached `responses` (pure).

    Args:
        items: An items table.
        spec: A remote judge spec.
        responses: Cached responses by request key (`RequestCache.get_many(plan.keys)`).
        conditions: Conditions to include (default: the spec's, else the template's).
        the_plan: A plan computed already for the same arguments (saves rebuilding prompts).

    Returns:
        `Built(judgments, details)`; requests without a cached response are left out of the
        table and listed as `pending` in `details`.
    """
    template = templates.get(str(spec.template))
    p = the_plan or plan(items, spec, conditions=conditions)
    records = item_records(items)
    rows: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    judge_id, prompt_id = spec.judge_id, spec.prompt_id  # hashed once, not once per row
    for req in p.requests:
        key_cols = {c: getattr(req, c) for c in KEY_COLUMNS}
        resp = responses.get(req.key)
        if resp is None:
            details.append(
                {**key_cols, "request_key": req.key, "status": "pending", "finish_reason": None}
                | {"n_verdict_tokens": None, "note": "no cached response"}
            )
            continue
        view = ItemView(records[req.item_index])
        output = resp.get("content")
        parsed = safe_parse(template, output, view, req.condition)
        finish = resp.get("finish_reason")
        note = parsed.note
        if finish == "length":
            note = "truncated (finish_reason=length)" + (f"; {note}" if note else "")
        pt, ct = resp.get("prompt_tokens"), resp.get("completion_tokens")
        rows.append(
            {
                **key_cols,
                "judge": judge_id,
                "model": spec.model,
                "prompt": prompt_id,
                "output": output,
                **judge_row(
                    template,
                    view,
                    parsed,
                    order=req.order,
                    condition=req.condition,
                    pairwise=template.pairwise,
                ),
                "prompt_tokens": pt,
                "completion_tokens": ct,
                "latency_s": resp.get("latency_s"),
                "cost_usd": cost_usd(spec, pt, ct),
                "request_key": req.key,
                "created_at": resp.get("created_at"),
            }
        )
        details.append(
            {**key_cols, "request_key": req.key, "status": "answered", "finish_reason": finish}
            | {"n_verdict_tokens": parsed.n_tokens, "note": note}
        )
    for s in p.skipped:
        details.append(
            {
                "benchmark": s.benchmark,
                "split": s.split,
                "item_id": s.item_id,
                "condition": s.condition,
                "order": 0,
                "sample": 0,
                "request_key": None,
                "status": "not_applicable",
                "finish_reason": None,
                "n_verdict_tokens": None,
                "note": s.reason,
            }
        )
    return Built(to_table(rows), pd.DataFrame(details, columns=DETAIL_COLUMNS))


def to_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Return judgment rows as a validated judgments table (empty rows → empty table)."""
    if not rows:
        return schema.empty(schema.JUDGMENTS)
    df = pd.DataFrame(rows)
    df["created_at"] = pd.to_datetime(df["created_at"], utc=True, format="ISO8601")
    for col in ("prompt_tokens", "completion_tokens"):
        df[col] = df[col].astype("Int64")
    for col in ("latency_s", "cost_usd"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    df["correct"] = df["correct"].astype("boolean")
    return schema.new_judgments(df)
