"""The nominal ratings every judge gives every unit: the input of the agreement measures.

Spec 000 §4.8 leaves the units, values and missing-value handling open; they are parameters:

- `units="item"` (default): a unit is an item; a judge's value is its consolidated label
  (pos/neg/tie, `votes.consolidated_labels`: tie for inconsistent or invalid pairs);
- `units="item_order"`: a unit is one presentation of an item; the value is the raw `chosen`
  (pos/neg/tie), an invalid output is missing;
- `tie_as_missing=True` treats tie values as missing (pos against neg only).

Every unit carries its `item` and its `cluster` (the resampling unit of `core.clusters`): the
two presentations of one item are never independent, so the agreement bootstraps resample
clusters (or at least items) with every unit of them together.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.analyses.juries.votes import greedy_pools, pool_labels
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

UNITS: tuple[str, ...] = ("item", "item_order")
#: Nominal code of each label in the `value` column of `ratings`.
RATING_CODES: dict[str, float] = {"pos": 0.0, "neg": 1.0, "tie": 2.0}


def ratings(
    judgments: pd.DataFrame,
    *,
    units: str = "item",
    tie_as_missing: bool = False,
    pool: str | None = "prompt",
) -> pd.DataFrame:
    """Return the nominal ratings every judge gave every unit (long form, greedy sample 0).

    Args:
        judgments: A judgments table; needs `judge`, `benchmark`, `split`, `item_id`,
            `sample`, `order`, `valid`, `chosen`, `correct` and the `pool` column.
        units: `item` (consolidated label per item) or `item_order` (raw verdict per
            presentation; invalid → missing).
        tie_as_missing: Treat tie values as missing.
        pool: Column whose values define separate pools of judges (None: one pool).

    Returns:
        `pool`, `benchmark`, `split`, `unit`, `judge`, `value` (0 = pos, 1 = neg, 2 = tie,
        NaN = missing), `item` (the item of the unit: both presentations of an item share
        it) and `cluster` (the item's resampling unit; the item itself when the judgments
        carry none).
    """
    check_choice("units", units, UNITS)
    data = greedy_pools(judgments, pool, "ratings")
    if units == "item":
        lab = pool_labels(data)
        out = lab[["pool", "benchmark", "split", "item_id", "judge"]].rename(
            columns={"item_id": "unit"}
        )
        out["value"] = lab["label"].map(RATING_CODES).astype(float)
        out["item"] = lab["item_id"].astype(str).to_numpy()
        out["cluster"] = unit_clusters(lab)
    else:
        _require(data, ["item_id", "order", "valid", "chosen"], "ratings")
        valid = data["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool)
        value = data["chosen"].astype(object).map(RATING_CODES).astype(float).where(valid)
        out = data[["pool", "benchmark", "split", "judge"]].copy()
        out.insert(3, "unit", data["item_id"].astype(str) + "#" + data["order"].astype(str))
        out["value"] = value.to_numpy()
        out["item"] = data["item_id"].astype(str).to_numpy()
        out["cluster"] = unit_clusters(data)
    if tie_as_missing:
        out.loc[out["value"] == RATING_CODES["tie"], "value"] = np.nan
    return out.reset_index(drop=True)


def unit_clusters(frame: pd.DataFrame) -> np.ndarray:
    """Return each row's resampling unit: its `cluster`, else its item (benchmark|split|item)."""
    own = (
        frame["benchmark"].astype(str)
        + "|"
        + frame["split"].astype(str)
        + "|item|"
        + frame["item_id"].astype(str)
    )
    if "cluster" not in frame.columns:
        return own.to_numpy(dtype=object)
    given = frame["cluster"].astype("string")
    return given.where(given.notna() & (given != ""), own).astype(str).to_numpy(dtype=object)
