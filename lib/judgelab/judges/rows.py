"""The rows every judge engine writes: one judgment row and one diagnostics row per answer.

Remote judges (`table.build`) and offline baselines (`offline.build`) share these rules:
`judge_row` turns a parsed output into `verdict, valid, chosen, correct`, `detail_row` makes
the diagnostics row, and `to_table` / `details_table` make validated frames of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from judgelab.core.verdicts import Parsed
from judgelab.judges.templates.base import ItemView, Template, parse_condition

if TYPE_CHECKING:  # pandas is imported where a frame is made: the judge path loads none
    import pandas as pd

KEY_COLUMNS = ["benchmark", "split", "item_id", "condition", "order", "sample"]
DETAIL_COLUMNS = [
    *KEY_COLUMNS,
    "request_key",
    "status",
    "finish_reason",
    "n_verdict_tokens",
    "note",
]


class Built(NamedTuple):
    """A judgment table and one diagnostics row per planned (or skipped) judgment.

    `details` has `benchmark, split, item_id, condition, order, sample, request_key,
    status` (answered | pending | not_applicable), `finish_reason`, `n_verdict_tokens`
    and `note` (parser remarks such as conflicting verdict tokens, truncation, or why an
    item does not apply).
    """

    judgments: pd.DataFrame
    details: pd.DataFrame


def item_records(items: pd.DataFrame | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the items as dicts with None for missing values."""
    if isinstance(items, list):  # records already (`judges.light` reads items without pandas)
        return items
    # column by column (`to_dict("records")` boxes every cell on its own: 10^4 items x 12
    # columns, 80 -> 15 ms, twice a run): the same values, numpy scalars as Python's
    columns = [_natives(items.iloc[:, i]) for i in range(items.shape[1])]
    names = list(items.columns)
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _natives(column: pd.Series) -> list[Any]:
    """The column's values as Python objects, None where missing."""
    import numpy as np  # loaded already with pandas (this module imports neither)

    values = column.astype(object).where(column.notna(), None).tolist()
    if column.dtype == object:  # cells may hold numpy scalars: as `to_dict` gives them
        return [v.item() if isinstance(v, np.generic) else v for v in values]
    return values


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
    cond = parse_condition(condition)
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


def detail_row(
    key: Mapping[str, Any],
    *,
    request_key: str | None,
    status: str,
    finish_reason: str | None = None,
    n_verdict_tokens: int | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """Return one diagnostics row: the judgment's key columns, then what happened to it."""
    return {
        **key,
        "request_key": request_key,
        "status": status,
        "finish_reason": finish_reason,
        "n_verdict_tokens": n_verdict_tokens,
        "note": note,
    }


def to_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Return judgment rows as a validated judgments table (empty rows → empty table)."""
    import pandas as pd

    from judgelab.core import schema

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


def built(rows: list[dict[str, Any]], details: list[dict[str, Any]]) -> Built:
    """Return `Built` from judgment rows and diagnostics rows."""
    import pandas as pd

    return Built(to_table(rows), pd.DataFrame(details, columns=DETAIL_COLUMNS))


__all__ = [
    "DETAIL_COLUMNS",
    "KEY_COLUMNS",
    "Built",
    "built",
    "detail_row",
    "item_records",
    "judge_row",
    "position_to_chosen",
    "to_table",
]
