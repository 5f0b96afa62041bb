"""Plan a judge's requests and build its judgment table from cached responses (pure).

`plan(items, spec)` lists every (item, condition, order, sample) the judge must answer, with
the exact request and its cache key. `build(items, spec, responses)` turns cached responses
into a judgments table; it calls nothing and reads no clock, so the table is a pure function
of the items, the spec and the cache: a rerun after kill -9 gives an identical table.
`plan_for` / `build_for` do the same for a judge resolved already (`Resolved`): the plan
carries its `Resolved`, so building from a plan resolves nothing again.

The cached request holds the endpoint (base URL without credentials or query), the model,
the messages and the sampling params. Sample k > 0 of a self-consistency run adds
`seed = (spec.seed or 0) + k` so that every sample is a distinct request; sample 0 is the same
request as a single run, so raising `n` reuses what is cached.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from judgelab.core.verdicts import Parsed
from judgelab.judges import cache as cache_mod
from judgelab.judges.resolved import Resolved
from judgelab.judges.rows import DETAIL_COLUMNS as DETAIL_COLUMNS
from judgelab.judges.rows import KEY_COLUMNS as KEY_COLUMNS
from judgelab.judges.rows import Built as Built
from judgelab.judges.rows import built, detail_row
from judgelab.judges.rows import item_records as item_records
from judgelab.judges.rows import judge_row as judge_row
from judgelab.judges.rows import position_to_chosen as position_to_chosen
from judgelab.judges.rows import to_table as to_table
from judgelab.judges.spec import JudgeSpec
from judgelab.judges.templates.base import (
    ItemView,
    NotApplicable,
    Template,
    format_condition,
    parse_condition,
)

if TYPE_CHECKING:  # annotations only: the judge path loads no pandas (issue 38, 3)
    import pandas as pd


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
    """All requests of a judge over a benchmark, what does not apply, and the judge."""

    requests: list[Planned]
    skipped: list[Skipped]
    judge: Resolved | None = None

    @property
    def keys(self) -> list[str]:
        """Return the distinct cache keys, in plan order."""
        return list(dict.fromkeys(p.key for p in self.requests))


def _expand(condition: str, item_task: str, template: Template) -> list[str]:
    """Add `candidate=pos/neg` when a single-response template grades a pairwise item."""
    if item_task == "pairwise" and not template.pairwise:
        base = parse_condition(condition)
        if "candidate" in base:
            return [condition]
        return [format_condition({**base, "candidate": which}) for which in ("pos", "neg")]
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
    return plan_for(items, Resolved.of(spec, conditions))


def plan_for(items: pd.DataFrame | list[dict[str, Any]], judge: Resolved) -> Plan:
    """List every request of a resolved remote judge over `items` (pure)."""
    if judge.template is None:
        spec = judge.spec
        raise ValueError(f"judge {spec.judge_id} is an offline baseline; it makes no requests")
    sampling = judge.spec.sampling()
    requests: list[Planned] = []
    skipped: list[Skipped] = []
    for idx, row in enumerate(item_records(items)):
        _plan_item(judge, row, idx, sampling, requests, skipped)
    return Plan(requests, skipped, judge)


def _plan_item(
    judge: Resolved,
    row: dict[str, Any],
    idx: int,
    sampling: dict[str, Any],
    requests: list[Planned],
    skipped: list[Skipped],
) -> None:
    """Append one item's requests (or why it does not apply) to `requests` / `skipped`."""
    assert judge.template is not None
    where = (str(row["benchmark"]), str(row["split"]), str(row["item_id"]))
    task = str(row["task"])
    if not judge.template.applies_to(task):
        reason = f"template is not for {task} items"
        skipped.append(Skipped(*where, ",".join(judge.conditions), reason))
        return
    for base in judge.conditions:
        for cond in _expand(base, task, judge.template):
            try:
                requests += _item_requests(judge, ItemView(row), where, cond, idx, sampling)
            except NotApplicable as exc:
                skipped.append(Skipped(*where, cond, str(exc)))


def _item_requests(
    judge: Resolved,
    view: ItemView,
    where: tuple[str, str, str],
    cond: str,
    idx: int,
    sampling: dict[str, Any],
) -> list[Planned]:
    """Return the requests of one (item, condition): every order and sample.

    Raises:
        NotApplicable: the template cannot build this item's prompt under `cond`.
    """
    spec, template = judge.spec, judge.template
    assert template is not None
    orders = spec.orders if template.pairwise else (0,)
    parsed_cond = parse_condition(cond)
    messages = {o: template.build(view, o, parsed_cond) for o in orders}
    out = []
    for order in orders:
        for sample in range(spec.n):
            request = request_for(spec, messages[order], sample, sampling=sampling)
            key = cache_mod.request_key(request)
            out.append(Planned(*where, cond, order, sample, request, key, idx))
    return out


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
        return template.parse(output, view, parse_condition(cond))
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
    return build_for(items, the_plan or plan(items, spec, conditions=conditions), responses)


def _answered(
    req: Planned, resp: Mapping[str, Any], view: ItemView, judge: Resolved
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return the judgment row and the diagnostics row of one cached response."""
    spec, template = judge.spec, judge.template
    assert template is not None
    key_cols = {c: getattr(req, c) for c in KEY_COLUMNS}
    output = resp.get("content")
    parsed = safe_parse(template, output, view, req.condition)
    finish = resp.get("finish_reason")
    note = parsed.note
    if finish == "length":
        note = "truncated (finish_reason=length)" + (f"; {note}" if note else "")
    pt, ct = resp.get("prompt_tokens"), resp.get("completion_tokens")
    verdicts = judge_row(
        template,
        view,
        parsed,
        order=req.order,
        condition=req.condition,
        pairwise=template.pairwise,
    )
    row = {
        **key_cols,
        "judge": spec.judge_id,
        "model": spec.model,
        "prompt": spec.prompt_id,
        "output": output,
        **verdicts,
        "prompt_tokens": pt,
        "completion_tokens": ct,
        "latency_s": resp.get("latency_s"),
        "cost_usd": cost_usd(spec, pt, ct),
        "request_key": req.key,
        "created_at": resp.get("created_at"),
    }
    detail = detail_row(
        key_cols,
        request_key=req.key,
        status="answered",
        finish_reason=finish,
        n_verdict_tokens=parsed.n_tokens,
        note=note,
    )
    return row, detail


def answered_rows(
    records: list[dict[str, Any]], req: Planned, resp: Mapping[str, Any], judge: Resolved
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return the judgment and diagnostics rows of planned request `req` given its answer.

    `records`: `item_records` of the items the plan was made of.
    """
    return _answered(req, resp, ItemView(records[req.item_index]), judge)


def build_for(
    items: pd.DataFrame,
    the_plan: Plan,
    responses: Mapping[str, Mapping[str, Any]],
    *,
    parsed: Mapping[int, tuple[dict[str, Any], dict[str, Any]]] | None = None,
    records: list[dict[str, Any]] | None = None,
) -> Built:
    """Build the judgment table of a plan's judge over `items` from cached `responses` (pure).

    `items` must be the items the plan was made of (`Planned.item_index` points into them).
    `parsed`: rows already made by `answered_rows` from the same cached answers, by plan
    index (a run parses answers while they arrive); `records`: `item_records(items)`.
    """
    return built(*build_rows(items, the_plan, responses, parsed=parsed, records=records))


def build_rows(
    items: pd.DataFrame | list[dict[str, Any]],
    the_plan: Plan,
    responses: Mapping[str, Mapping[str, Any]],
    *,
    parsed: Mapping[int, tuple[dict[str, Any], dict[str, Any]]] | None = None,
    records: list[dict[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return the judgment rows and diagnostics rows `build_for` makes its tables of (pure).

    `items` may be `item_records` already (`judges.light` builds its tables without pandas).
    """
    judge = the_plan.judge
    if judge is None:
        raise ValueError("the plan carries no resolved judge; make it with `plan`/`plan_for`")
    records = item_records(items) if records is None else records
    parsed = parsed or {}
    rows: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    for i, req in enumerate(the_plan.requests):
        done = parsed.get(i)
        if done is not None:
            rows.append(done[0])
            details.append(done[1])
            continue
        resp = responses.get(req.key)
        if resp is None:
            key_cols = {c: getattr(req, c) for c in KEY_COLUMNS}
            details.append(
                detail_row(
                    key_cols, request_key=req.key, status="pending", note="no cached response"
                )
            )
            continue
        row, detail = _answered(req, resp, ItemView(records[req.item_index]), judge)
        rows.append(row)
        details.append(detail)
    for s in the_plan.skipped:
        key_cols = {"benchmark": s.benchmark, "split": s.split, "item_id": s.item_id}
        key_cols |= {"condition": s.condition, "order": 0, "sample": 0}
        details.append(
            detail_row(key_cols, request_key=None, status="not_applicable", note=s.reason)
        )
    return rows, details


__all__ = [
    "DETAIL_COLUMNS",
    "KEY_COLUMNS",
    "Built",
    "Plan",
    "Planned",
    "Skipped",
    "answered_rows",
    "build",
    "build_for",
    "build_rows",
    "cost_usd",
    "item_records",
    "judge_row",
    "plan",
    "plan_for",
    "position_to_chosen",
    "request_for",
    "safe_parse",
    "to_table",
]
