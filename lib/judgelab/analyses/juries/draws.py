"""The distribution of hits over repeated draws of a judge (ContextualJudgeBench Fig. 7)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: What a draw's *hit* is in `draw_counts`.
COUNTS: tuple[str, ...] = ("auto", "correct", "pos")


def draw_counts(
    judgments: pd.DataFrame,
    *,
    count: str = "auto",
    groups: Sequence[str] = ("judge",),
    min_samples: int = 2,
) -> pd.DataFrame:
    """Return the Fig. 7 distribution: per judge and run, how many items got k hits of n draws.

    A *hit* is a correct verdict (`count="correct"`, needs gold) or a verdict for the
    response in the `pos` slot (`count="pos"`, defined without gold: mass at 0 and n means
    the repeated draws agree). `auto` picks `correct` when every item has gold.
    Run 1 = order 0 (positive shown first), Run 2 = order 1. Items are pooled over splits.

    Returns:
        The `groups` columns, `run` ("Run 1"/"Run 2"), `count`, `n_draws`, `hits`, `n_items`,
        `share` (of the items of that judge, run and n_draws).
    """
    groups = list(groups)
    _require(
        judgments,
        [*groups, "item_id", "split", "order", "sample", "chosen", "correct"],
        "draw_counts",
    )
    check_choice("count", count, COUNTS)
    if count == "auto":
        count = "correct" if judgments["correct"].notna().all() else "pos"
    data = judgments
    if count == "correct":
        if data["correct"].isna().any():
            raise ValueError("count='correct' needs gold: some judgments have a null `correct`")
        hit = data["correct"].astype("boolean").fillna(False).to_numpy(dtype=int)
    else:
        hit = (data["chosen"].astype(object) == "pos").to_numpy(dtype=int)
    keys = [*groups, "split", "item_id", "order"]
    per = data[keys].assign(_hit=hit).groupby(keys, sort=False, dropna=False)["_hit"]
    per = per.agg(hits="sum", n_draws="count").reset_index()
    per = per[per["n_draws"] >= min_samples]
    per["run"] = np.where(per["order"] == 0, "Run 1", "Run 2")
    out = per.groupby([*groups, "run", "n_draws", "hits"], sort=True).size().rename("n_items")
    out = out.reset_index()
    out["share"] = out["n_items"] / out.groupby([*groups, "run", "n_draws"])["n_items"].transform(
        "sum"
    )
    out.insert(len(groups) + 1, "count", count)
    return out
