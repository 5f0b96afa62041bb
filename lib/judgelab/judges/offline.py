r"""Offline judges: transparent baselines that need no network (`endpoint: offline`).

They are real computations on real inputs, and they are **baselines**: their judge ids start
with `offline-` and their `prompt` column with `offline:` so that every table and figure
labels them as such. Which baselines exist, and their options, is declared in
`judgelab.judges.baselines`; this module holds each one's rule (`RULES`) and runs them.

- `prefer_longer` (pairwise): the longer response in length unit `unit` (default words);
  equal lengths → tie.
- `always_a` (pairwise): always position A, a positional-bias control.
- `lexical_grounding` (pairwise, pointwise): the share of a response's content tokens found
  in the context; refusals get `refusal_score`. Pairwise: the higher score (equal → tie);
  pointwise: the score itself (not comparable to gold, so `correct` stays null).
- `reference_similarity` (pairwise, pointwise): token-F1 or ROUGE-L against the reference:
  the argmax of the two (pairwise, spec 001 §4.6; equal → tie), or Correct when the score is
  at least `threshold` (pointwise), else Incorrect.

Each baseline refuses clearly (`OfflineNotApplicable`) on a benchmark it does not apply to:
pairwise-only baselines on a benchmark without pairwise items, lexical grounding without any
context, reference similarity without any reference. Single items that lack the input are
kept as invalid rows whose output says why, so they are counted, never dropped.

The text measures (refusal, content tokens, grounding, token-F1, ROUGE-L, `SIMILARITY`) live
in `judgelab.core.text` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from judgelab.core import lengths
from judgelab.core.text import REFUSAL_PATTERNS as REFUSAL_PATTERNS
from judgelab.core.text import SIMILARITY as SIMILARITY
from judgelab.core.text import STOPWORDS as STOPWORDS
from judgelab.core.text import content_tokens as content_tokens
from judgelab.core.text import grounding as grounding
from judgelab.core.text import is_refusal as is_refusal
from judgelab.core.text import rouge_l as rouge_l
from judgelab.core.text import rouge_tokens as rouge_tokens
from judgelab.core.text import squad_tokens as squad_tokens
from judgelab.core.text import token_f1 as token_f1
from judgelab.core.verdicts import Parsed
from judgelab.errors import OfflineNotApplicable as OfflineNotApplicable
from judgelab.judges.baselines import BASELINES as BASELINES
from judgelab.judges.baselines import Baseline as Baseline
from judgelab.judges.rows import Built, built, detail_row, item_records, judge_row
from judgelab.judges.templates.base import ItemView, NotApplicable, parse_condition

#: A baseline's rule: (item, order, parsed condition, options) -> (output text, parsed verdict).
Rule = Callable[[ItemView, int, dict[str, str], Mapping[str, Any]], tuple[str, Parsed]]


def _pick(score_a: float, score_b: float) -> str:
    return "A" if score_a > score_b else "B" if score_b > score_a else "tie"


def _prefer_longer(view: ItemView, order: int, cond: dict[str, str], opts: Mapping[str, Any]):
    a, b = view.pair(order)
    la, lb = lengths.count(a, opts["unit"]), lengths.count(b, opts["unit"])
    v = _pick(la, lb)
    return f"len(A)={la:g} len(B)={lb:g} {opts['unit']} -> {v}", Parsed(v, True, 1)


def _always_a(view: ItemView, order: int, cond: dict[str, str], opts: Mapping[str, Any]):
    view.pair(order)
    return "always A (positional control)", Parsed("A", True, 1)


def _ground_score(text: str, context: str, opts: Mapping[str, Any]) -> tuple[float, str]:
    if is_refusal(text):
        return float(opts["refusal_score"]), "refusal"
    return grounding(text, context), "answer"


def _lexical(view: ItemView, order: int, cond: dict[str, str], opts: Mapping[str, Any]):
    context = view.need("context")
    if view.row.get("task") == "pairwise":
        a, b = view.pair(order)
        (sa, ka), (sb, kb) = _ground_score(a, context, opts), _ground_score(b, context, opts)
        v = _pick(sa, sb)
        return f"grounding A={sa:.4f} ({ka}) B={sb:.4f} ({kb}) -> {v}", Parsed(v, True, 1)
    s, kind = _ground_score(view.candidate(cond), context, opts)
    return f"grounding={s:.4f} ({kind})", Parsed(f"{s:.4f}", True, 1, kind)


def _similarity(view: ItemView, order: int, cond: dict[str, str], opts: Mapping[str, Any]):
    ref = view.reference(cond if "reference" in cond else {**cond, "reference": "human"})
    if ref is None:
        raise NotApplicable("reference=none: reference similarity needs a reference")
    sim = SIMILARITY[opts["metric"]]
    if view.row.get("task") == "pairwise":
        a, b = view.pair(order)
        sa, sb = sim(a, ref), sim(b, ref)
        v = _pick(sa, sb)
        return f"{opts['metric']} A={sa:.4f} B={sb:.4f} -> {v}", Parsed(v, True, 1)
    s = sim(view.candidate(cond), ref)
    v = "Correct" if s >= opts["threshold"] else "Incorrect"
    return f"{opts['metric']}={s:.4f} threshold={opts['threshold']:g} -> {v}", Parsed(v, True, 1)


#: Each declared baseline's rule, by name (`tests/judges/test_baselines.py` checks both agree).
RULES: dict[str, Rule] = {
    "prefer_longer": _prefer_longer,
    "always_a": _always_a,
    "lexical_grounding": _lexical,
    "reference_similarity": _similarity,
}


def check_benchmark(items: pd.DataFrame, baseline: Baseline) -> None:
    """Raise `OfflineNotApplicable` when `baseline` cannot judge any item of `items`."""
    name = ",".join(sorted(map(str, items["benchmark"].unique()))) if len(items) else "?"
    tasks = set(items["task"]) if len(items) else set()
    usable = ({"pairwise"} if baseline.pairwise else set()) | (
        {"pointwise", "qa"} if baseline.pointwise else set()
    )
    if not tasks & usable:
        raise OfflineNotApplicable(
            f"offline baseline {baseline.name!r} judges {sorted(usable)} items; benchmark "
            f"{name!r} has only {sorted(tasks) or 'no'} items"
        )
    if baseline.needs:
        col = (
            items[baseline.needs] if baseline.needs in items.columns else pd.Series([], dtype=str)
        )
        has = col.astype(object).map(lambda v: isinstance(v, str) and bool(v.strip()))
        if not has.any():
            raise OfflineNotApplicable(
                f"offline baseline {baseline.name!r} needs a {baseline.needs} and no item of "
                f"benchmark {name!r} has one"
            )


def _judge_one(
    baseline: Baseline, view: ItemView, order: int, cond: str, opts: Mapping[str, Any]
) -> tuple[str, Parsed]:
    """Return the output text and verdict of one (item, condition, order)."""
    try:
        return RULES[baseline.name](view, order, parse_condition(cond), opts)
    except NotApplicable as exc:
        return f"not applicable: {exc}", Parsed(None, False, 0, str(exc))


def build(
    items: pd.DataFrame,
    *,
    name: str,
    options: Mapping[str, Any],
    judge_id: str,
    conditions: list[str] | None = None,
    orders: tuple[int, ...] = (0, 1),
) -> Built:
    """Judge every item with an offline baseline; return the judgments and their details.

    Raises:
        OfflineNotApplicable: the baseline does not apply to this benchmark at all.
    """
    baseline = BASELINES[name]
    opts = baseline.check_options(options)
    check_benchmark(items, baseline)
    conds = conditions or list(baseline.conditions)
    rows: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    for row in item_records(items):
        view = ItemView(row)
        pairwise = str(row["task"]) == "pairwise"
        if (pairwise and not baseline.pairwise) or (not pairwise and not baseline.pointwise):
            continue
        for cond in conds:
            for order in orders if pairwise else (0,):
                output, parsed = _judge_one(baseline, view, order, cond, opts)
                key = {
                    "benchmark": row["benchmark"],
                    "split": row["split"],
                    "item_id": row["item_id"],
                    "condition": cond,
                    "order": order,
                    "sample": 0,
                }
                verdicts = judge_row(
                    None, view, parsed, order=order, condition=cond, pairwise=pairwise
                )
                if not baseline.gold_comparable and not pairwise:
                    verdicts["correct"] = None  # a grounding score is not a gold label
                rows.append(
                    {
                        **key,
                        "judge": judge_id,
                        "model": f"offline:{name}",
                        "prompt": f"offline:{name}",
                        "output": output,
                        **verdicts,
                        "prompt_tokens": None,
                        "completion_tokens": None,
                        "latency_s": None,
                        "cost_usd": 0.0,
                        "request_key": None,
                        "created_at": None,
                    }
                )
                details.append(
                    detail_row(
                        key,
                        request_key=None,
                        status="answered" if parsed.valid else "not_applicable",
                        n_verdict_tokens=parsed.n_tokens,
                        note=parsed.note,
                    )
                )
    return built(rows, details)


__all__ = [
    "BASELINES",
    "RULES",
    "SIMILARITY",
    "Baseline",
    "OfflineNotApplicable",
    "build",
    "check_benchmark",
    "content_tokens",
    "grounding",
    "is_refusal",
    "rouge_l",
    "token_f1",
]
