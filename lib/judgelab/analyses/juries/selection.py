"""Notebook helpers: filter judgments and result tables, and choose the focus of a figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.core.schema import require_columns as _require


def select(
    judgments: pd.DataFrame,
    *,
    pool: str | None = "prompt",
    pools: Sequence[str] = (),
    splits: Sequence[str] = (),
    judges: Sequence[str] = (),
) -> pd.DataFrame:
    """Return the judgments of the named pools, splits and judges (empty selection: all).

    Raises:
        ValueError: a named pool, split or judge has no rows (the message lists the known ones).
    """
    out = judgments
    for column, wanted in ((pool, pools), ("split", splits), ("judge", judges)):
        if not wanted:
            continue
        if column is None:
            raise ValueError("pools given but pool is None")
        _require(out, [column], "select")
        known = set(out[column].astype(str))
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise ValueError(f"unknown {column} value(s) {unknown}; known: {sorted(known)}")
        out = out[out[column].isin(list(wanted))]
    return out.reset_index(drop=True)


def pick(table: pd.DataFrame, **equals: object) -> pd.DataFrame:
    """Return the rows whose columns equal the given values (a list value means any of them).

    >>> pick(pd.DataFrame({"a": [1, 2, 3]}), a=[1, 3])["a"].tolist()
    [1, 3]
    """
    _require(table, list(equals), "pick")
    mask = np.ones(len(table), dtype=bool)
    for column, value in equals.items():
        if isinstance(value, (list, tuple, set)):
            mask &= table[column].isin(list(value)).to_numpy()
        else:
            mask &= (table[column] == value).to_numpy()
    return table[mask].reset_index(drop=True)


class Focus(NamedTuple):
    """The pool and split shown in single-panel figures, and why they were chosen."""

    pool: str
    split: str
    note: str


def resolve_focus(
    judgments: pd.DataFrame,
    *,
    pool: str | None = "prompt",
    focus_pool: str = "",
    focus_split: str = "",
) -> Focus:
    """Return the requested pool and split if present, else the largest pool and split.

    "Largest" means most judges (pool) and most items (split within that pool). The note
    says when a request was replaced, so figure titles never hide the substitution.
    """
    _require(judgments, ["judge", "split", "item_id"], "resolve_focus")
    data = judgments.assign(_pool="all" if pool is None else judgments[pool])
    notes = []
    pools = data.groupby("_pool")["judge"].nunique().sort_values(ascending=False, kind="stable")
    chosen_pool = focus_pool if focus_pool in pools.index else str(pools.index[0])
    if focus_pool and focus_pool != chosen_pool:
        notes.append(f"pool {focus_pool!r} not in the data; showing {chosen_pool!r}")
    part = data[data["_pool"] == chosen_pool]
    splits = part.groupby("split")["item_id"].nunique().sort_values(ascending=False, kind="stable")
    chosen_split = focus_split if focus_split in splits.index else str(splits.index[0])
    if focus_split and focus_split != chosen_split:
        notes.append(f"split {focus_split!r} not in the data; showing {chosen_split!r}")
    return Focus(chosen_pool, chosen_split, "; ".join(notes) or "as requested")
