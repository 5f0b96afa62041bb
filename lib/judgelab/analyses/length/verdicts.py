"""The two tables every length analysis starts from, and the keys they share.

- `pairwise_verdicts`: one row per pairwise judgment (judge × item × order × sample) with the
  two response lengths, which one is longer, whether the judge picked it, and which response
  was shown first;
- `item_table`: one row per judge × item (both task types): `correct` (pairwise: consistent
  accuracy from `pairwise.item_outcomes`; pointwise: the judgment's `correct`), `consistent`
  (pairwise only), `score` (a numeric pointwise verdict), and the context / response lengths.

Lengths come from `judgelab.core.lengths.add_lengths` (one named unit; never mixed): both
tables need an items table that already carries `len_*` columns and `len_unit`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import polars as pl

from judgelab.analyses import pairwise
from judgelab.analyses.length import lazy
from judgelab.core import clusters
from judgelab.core.schema import meta_field
from judgelab.core.schema import require_columns as _require

#: The columns that name one item.
KEYS = ("benchmark", "split", "item_id")

_ITEM_COLUMNS = [
    "judge",
    *KEYS,
    "sample",
    "task",
    "correct",
    "consistent",
    "score",
    "len_context",
    "len_response",
    "len_diff",
    "len_unit",
    "cluster",
]


def require_lengths(items: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """Raise `KeyError` naming `add_lengths` when `items` lack length `columns` or `len_unit`.

    >>> require_lengths(pd.DataFrame({"len_pos": [1], "len_unit": ["words"]}), ["len_pos"], "t")
    """
    missing = [c for c in [*columns, "len_unit"] if c not in items.columns]
    if missing:
        raise KeyError(
            f"{what}: items lack length column(s) {missing}; "
            "call judgelab.core.lengths.add_lengths(items, unit=...) first"
        )


def length_unit(table: Any) -> str:
    """Return the length unit named in `len_unit` (its first value; "" when there is none).

    >>> length_unit(pd.DataFrame({"len_unit": [None, "words"]})), length_unit(pd.DataFrame())
    ('words', '')
    """
    if lazy.is_lazy(table):
        return table.len_unit
    if "len_unit" not in table.columns or table["len_unit"].dropna().empty:
        return ""
    return str(table["len_unit"].dropna().iloc[0])


def item_key(df: pd.DataFrame) -> np.ndarray:
    """Return one string per row naming its item (`benchmark`, `split`, `item_id`).

    The bootstrap resamples these keys, so both orders of an item stay together.
    """
    return (
        df["benchmark"].astype(str)
        + "\x1f"
        + df["split"].astype(str)
        + "\x1f"
        + df["item_id"].astype(str)
    ).to_numpy()


def group_label(df: pd.DataFrame, by: Sequence[str]) -> pd.Series:
    """Return one display label per row: the `by` values joined by " · "."""
    if df.empty:
        return pd.Series([], dtype=object, index=df.index)
    return df[list(by)].astype(str).agg(" · ".join, axis=1)


def group_rows(frame: pd.DataFrame, idx: np.ndarray) -> pd.DataFrame:
    """Return the rows `idx` of `frame` (a `groupby(...).indices` group), as `frame.iloc`.

    A group that is the whole frame (one judge's rows read judge by judge, one group) is the
    frame itself: no copy of 2·10^6 rows. Callers read the group, never write to it.
    """
    return frame if len(idx) == len(frame) else frame.iloc[idx]


def groups_of(
    frames: Iterable[pd.DataFrame], by: list[str]
) -> Iterator[tuple[tuple, pd.DataFrame]]:
    """Each group of each frame, in `by` order: its key (a tuple) and its rows (`group_rows`).

    Groups are the observed `by` values; rows with a null key belong to none.
    """
    for frame in frames:
        if not len(frame):
            continue
        for key, idx in frame.groupby(by, sort=True, observed=True, dropna=True).indices.items():
            yield (key if isinstance(key, tuple) else (key,)), group_rows(frame, idx)


def with_clusters(
    frame: pd.DataFrame, items: pd.DataFrame, judgments: pd.DataFrame
) -> pd.DataFrame:
    """Return `frame` (keyed by `KEYS`) with the `cluster` of its item (`core.clusters`).

    The judgments' own `cluster` column wins (the data layer copies it there); else the
    items' `cluster`; rows without one get their item as unit. A `frame` built from the
    judgments' rows may bring their `cluster` along (`_cluster` column): then only rows
    without one are looked up (`clusters.attach`), which saves a join per table.
    """
    if "_cluster" in frame.columns:
        given = frame["_cluster"].astype(object)
        missing = (given.isna() | (given == "")).to_numpy()
        out = frame.drop(columns=["_cluster"])
        out[clusters.COLUMN] = given.to_numpy()
        if missing.any():
            out.loc[missing, clusters.COLUMN] = with_clusters(out[missing], items, judgments)[
                clusters.COLUMN
            ].to_numpy()
        return out
    source = judgments if clusters.COLUMN in judgments.columns else items
    return clusters.attach(frame, source[[*KEYS, *source.columns.intersection([clusters.COLUMN])]])


def _unit(items: pd.DataFrame) -> str:
    units = items["len_unit"].dropna().unique()
    if len(units) > 1:
        raise ValueError(f"items mix length units {sorted(units)}; recompute in one unit")
    return str(units[0]) if len(units) else ""


def _select(judgments: pd.DataFrame, judges: Sequence[str], sample: int | None) -> pd.DataFrame:
    data = pairwise.select_judges(judgments, judges)
    if sample is not None:
        data = data[data["sample"] == sample]
    return data


def pairwise_verdicts(
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    judges: Sequence[str] = (),
    sample: int | None = 0,
) -> pd.DataFrame:
    """Return one row per pairwise judgment with the lengths of the two responses.

    Args:
        items: An items table with lengths (`judgelab.core.lengths.add_lengths`); needs
            `benchmark`, `split`, `item_id`, `task`, `meta`, `len_pos`, `len_neg`,
            `len_context`, `len_unit`. Only `task == "pairwise"` items are used.
        judgments: A judgments table; needs `judge`, `benchmark`, `split`, `item_id`,
            `order`, `sample`, `valid`, `chosen`, `correct`, `verdict`.
        judges: Judge ids to keep (all when empty).
        sample: Keep this `sample` (0 = greedy); None keeps every sample.

    Returns:
        `judge`, `benchmark`, `split`, `item_id`, `order`, `sample`, `verdict`, `chosen`,
        `correct`, `len_pos`, `len_neg`, `len_context`, `len_mean` ((len_pos + len_neg) / 2),
        `len_diff` (len_pos − len_neg), `longer` (`pos`, `neg` or `equal`), `picked_longer`
        (1/0 for a pos/neg verdict on a pair of unequal lengths, NaN otherwise),
        `first_shown` (`pos` in order 0, `neg` in order 1), `both_orders` (the judge has
        judgments in both orders), `model_pos`, `model_neg` (from meta, when present),
        `len_unit`, `cluster` (the resampling unit, `with_clusters`).
    """
    _require(items, [*KEYS, "task", "meta"], "pairwise_verdicts items")
    require_lengths(items, ["len_pos", "len_neg", "len_context"], "pairwise_verdicts")
    if isinstance(judgments, pl.LazyFrame):  # a large source (`lazy`)
        unit = _unit(items)
        return lazy.verdicts(items, judgments, judges=judges, sample=sample, unit=unit)
    _require(
        judgments,
        ["judge", *KEYS, "order", "sample", "valid", "chosen", "correct", "verdict"],
        "pairwise_verdicts judgments",
    )
    pair = items[items["task"] == "pairwise"]
    side = pair[[*KEYS, "len_pos", "len_neg", "len_context", "len_unit"]].copy()
    side["model_pos"] = meta_field(pair["meta"], "model_pos").astype("string")
    side["model_neg"] = meta_field(pair["meta"], "model_neg").astype("string")
    cols = ["judge", *KEYS, "order", "sample", "verdict", "chosen", "correct"]
    data = _select(judgments, judges, sample)
    carry = clusters.COLUMN in data.columns
    data = data[cols].assign(_cluster=data[clusters.COLUMN]) if carry else data[cols]
    out = data.merge(side, on=list(KEYS), how="inner", validate="many_to_one")
    for c in ("len_pos", "len_neg", "len_context"):
        out[c] = out[c].astype(float)
    out["len_mean"] = (out["len_pos"] + out["len_neg"]) / 2
    out["len_diff"] = out["len_pos"] - out["len_neg"]
    d = out["len_diff"].to_numpy()
    out["longer"] = np.select([d > 0, d < 0], ["pos", "neg"], "equal")
    chosen = out["chosen"].astype(object).fillna("").to_numpy()
    decisive = np.isin(chosen, ("pos", "neg")) & (out["longer"].to_numpy() != "equal")
    out["picked_longer"] = np.where(decisive, (chosen == out["longer"].to_numpy()), np.nan)
    out["order"] = out["order"].astype(int)
    out["first_shown"] = np.where(out["order"] == 0, "pos", "neg")
    n_orders = out.groupby("judge")["order"].transform("nunique")
    out["both_orders"] = n_orders.to_numpy() == 2
    return with_clusters(out.reset_index(drop=True), items, judgments)


def item_table(
    items: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    judges: Sequence[str] = (),
    sample: int | None = 0,
    invalid_policy: str = "repo",
) -> pd.DataFrame:
    """Return one row per judge × item of both task types, with correctness and lengths.

    Pairwise items are paired over the two orders by `pairwise.item_outcomes`: `correct` is
    consistent accuracy (correct in both orders; null without gold or with one order only)
    and `consistent` is consistency. Pointwise (and qa) items take `correct` from the
    judgment and `score` from a numeric `verdict` (e.g. a 1–10 grade); `consistent` is null.

    Args:
        items: An items table with lengths (`judgelab.core.lengths.add_lengths`); needs
            `benchmark`, `split`, `item_id`, `task`, `len_context`, `len_pos`, `len_neg`,
            `len_response`, `len_unit`.
        judgments: A judgments table (see `pairwise.item_outcomes` for pairwise columns).
        judges: Judge ids to keep (all when empty).
        sample: Keep this `sample` (0 = greedy); None keeps every sample.
        invalid_policy: Passed to `pairwise.item_outcomes`.

    Returns:
        `judge`, `benchmark`, `split`, `item_id`, `sample`, `task`, `correct`, `consistent`,
        `score` (floats; NaN when undefined), `len_context`, `len_response` (pairwise: the
        mean of the pair), `len_diff` (pairwise: len_pos − len_neg), `len_unit`, `cluster`
        (the resampling unit, `with_clusters`).
    """
    _require(items, [*KEYS, "task"], "item_table items")
    require_lengths(
        items, ["len_context", "len_pos", "len_neg", "len_response"], "item_table items"
    )
    lens = _item_lengths(items)
    if isinstance(judgments, pl.LazyFrame):  # a large source (`lazy`)
        return lazy.item_rows(
            items, judgments, judges=judges, sample=sample, invalid_policy=invalid_policy,
            lens=lens,
        )  # fmt: skip
    _require(judgments, ["judge", *KEYS, "sample", "verdict", "correct"], "item_table")
    data = _select(judgments, judges, sample)
    tasks = data[list(KEYS)].merge(lens[[*KEYS, "task"]], on=list(KEYS), how="left")["task"]
    parts = []
    pw = data[(tasks == "pairwise").to_numpy()]
    if len(pw):
        parts.append(_pairwise_rows(pw, invalid_policy))
    pt = data[(tasks.isin(["pointwise", "qa"])).to_numpy()]
    if len(pt):
        parts.append(_pointwise_rows(pt))
    if not parts:
        return pd.DataFrame(columns=_ITEM_COLUMNS)
    table = pd.concat(parts, ignore_index=True)
    for c in KEYS:
        table[c] = table[c].astype(str)
    for c in KEYS:
        lens[c] = lens[c].astype(str)
    table = table.merge(lens, on=list(KEYS), how="left", validate="many_to_one")
    return with_clusters(table, items, judgments)[_ITEM_COLUMNS]


def item_counts(table: Any) -> pd.DataFrame:
    """Return the rows of an `item_table` (pandas or lazy) per judge × task: `n_items`."""
    if lazy.is_lazy(table):
        return lazy.task_counts(table)
    return table.groupby(["judge", "task"]).size().rename("n_items").reset_index()


def _item_lengths(items: pd.DataFrame) -> pd.DataFrame:
    """Per item: task, context length, response length (pairwise: pair mean), len_diff, unit."""
    lens = items[[*KEYS, "task", "len_context", "len_pos", "len_neg", "len_response"]].copy()
    for c in ("len_context", "len_pos", "len_neg", "len_response"):
        lens[c] = lens[c].astype(float)
    pairwise = lens["task"] == "pairwise"
    lens["len_diff"] = np.where(pairwise, lens["len_pos"] - lens["len_neg"], np.nan)
    lens["len_response"] = np.where(
        pairwise, (lens["len_pos"] + lens["len_neg"]) / 2, lens["len_response"]
    )
    lens["len_unit"] = _unit(items)
    return lens.drop(columns=["len_pos", "len_neg"])


def _pairwise_rows(judgments: pd.DataFrame, invalid_policy: str) -> pd.DataFrame:
    """Pairwise judgments paired over both orders: consistent accuracy and consistency."""
    out = pairwise.item_outcomes(
        judgments, groups=("judge", *KEYS[:2]), invalid_policy=invalid_policy
    )
    out = out[out["complete"].astype(bool)]
    return _judge_item_rows(
        out,
        correct=out["consistently_correct"].astype("Float64").astype(float),
        consistent=out["consistent"].astype("Float64").astype(float),
        score=np.nan,
    )


def _pointwise_rows(judgments: pd.DataFrame) -> pd.DataFrame:
    """Pointwise (and qa) judgments: the judgment's `correct` and a numeric `score`."""
    return _judge_item_rows(
        judgments,
        correct=judgments["correct"].astype("Float64").astype(float),
        consistent=np.nan,
        score=pd.to_numeric(judgments["verdict"].astype(object), errors="coerce"),
    )


def _judge_item_rows(
    rows: pd.DataFrame, *, correct: Any, consistent: Any, score: Any
) -> pd.DataFrame:
    """One row per judge × item × sample of `rows` with its `correct`, `consistent`, `score`."""
    return pd.DataFrame(
        {
            "judge": rows["judge"],
            "benchmark": rows["benchmark"],
            "split": rows["split"],
            "item_id": rows["item_id"],
            "sample": rows["sample"].astype(int),
            "correct": correct,
            "consistent": consistent,
            "score": score,
        }
    )
