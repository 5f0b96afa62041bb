"""The units a stability measure compares: one presentation of one item, rated twice or more.

A *unit* is one item in one presentation order (`benchmark`, `split`, `item_id`, `order`):
both orders of a pairwise item are two units, so a verdict shift counts what a swap of judge
does to each presentation. Its *label* is `chosen` for pairwise judgments (pos/neg/tie,
un-swapped) and `verdict` otherwise; invalid outputs carry no label. Units are resampled by
their `cluster` (`core.clusters.codes`: the items' cluster, else the item).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.core import clusters
from judgelab.core.schema import require_columns

#: Columns naming one unit (one item in one presentation order).
UNIT_KEYS: tuple[str, ...] = ("benchmark", "split", "item_id", "order")


def label_column(judgments: pd.DataFrame) -> str:
    """Return the label a stability measure compares: `chosen` when any is set, else `verdict`.

    >>> label_column(pd.DataFrame({"chosen": [None], "verdict": ["Correct"]}))
    'verdict'
    """
    if "chosen" in judgments.columns and judgments["chosen"].notna().any():
        return "chosen"
    return "verdict"


def labelled(judgments: pd.DataFrame, *, label: str | None = None) -> tuple[pd.DataFrame, str]:
    """Return the valid rows that carry a label, with `label` as a string column, and its name."""
    name = label or label_column(judgments)
    require_columns(judgments, [*UNIT_KEYS, name], "stability")
    rows = judgments
    if "valid" in rows.columns:
        rows = rows[rows["valid"].fillna(False).astype(bool)]
    rows = rows[rows[name].notna()].copy()
    rows[name] = rows[name].astype(str)
    return rows, name


def wide(
    judgments: pd.DataFrame,
    *,
    by: str,
    label: str | None = None,
    keys: Sequence[str] = UNIT_KEYS,
) -> pd.DataFrame:
    """Return one row per unit and one label column per value of `by` (sample 0 only).

    Args:
        judgments: A judgments table (`benchmark`, `split`, `item_id`, `order`, `by`, the
            label, and `cluster` when the items have one).
        by: The column whose values are compared (`judge`, `prompt`, `model`, `sample`, …).
        label: The label column (default `label_column`).
        keys: The columns naming a unit.

    Returns:
        `keys`, `cluster` (the unit's resampling unit) and one column per value of `by`
        (the label; missing where that value did not rate the unit).
    """
    rows, name = labelled(judgments, label=label)
    require_columns(rows, [by], "stability.wide")
    if by != "sample" and "sample" in rows.columns:
        rows = rows[rows["sample"].fillna(0).astype(int) == 0]
    keys = list(keys)
    dup = rows.duplicated([*keys, by])
    if dup.any():
        first = rows[dup].iloc[0]
        where = ", ".join(f"{k}={first[k]!r}" for k in [*keys, by])
        raise ValueError(f"stability: two labels for one unit and {by} ({where})")
    out = rows.pivot(index=keys, columns=by, values=name)
    out.columns = [str(c) for c in out.columns]
    out = out.reset_index()
    if "cluster" in rows.columns:
        cl = rows.drop_duplicates(keys).set_index(keys)["cluster"]
        out["cluster"] = cl.reindex(pd.MultiIndex.from_frame(out[keys])).to_numpy()
    else:
        out["cluster"] = None
    return out


def unit_codes(frame: pd.DataFrame) -> np.ndarray:
    """Return the resampling-unit code of each row (`core.clusters.codes` on `cluster`)."""
    return clusters.codes(frame)


def only(frame: pd.DataFrame, column: str, values: Sequence[object]) -> pd.DataFrame:
    """Return the rows whose `column` is one of `values` (empty `values`: every row).

    >>> len(only(pd.DataFrame({"prompt": ["a", "b", "a"]}), "prompt", ["a"]))
    2
    """
    require_columns(frame, [column], "stability.only")
    if not values:
        return frame
    return frame[frame[column].isin(list(values))]
