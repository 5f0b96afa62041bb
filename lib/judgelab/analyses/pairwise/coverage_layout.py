"""The layout of one judge × sample of `coverage`, shared by the eager and the lazy path."""

from __future__ import annotations

from typing import Any

import pandas as pd


def coverage_frame(
    per: pd.DataFrame, expected: pd.Series, judge: Any, sample: Any, keys: list[str]
) -> pd.DataFrame:
    """Lay out one judge × sample of `coverage` from its complete/incomplete/unknown counts.

    `per` holds the counts per group key (columns `complete`, `incomplete`, `unknown`),
    `expected` the items the table has per group key.
    """
    per = per.reindex(expected.index.union(per.index), fill_value=0)
    frame = pd.DataFrame({"n_items_table": expected}).reindex(per.index).fillna(0)
    frame["n_complete"] = per["complete"]
    frame["n_incomplete"] = per["incomplete"]
    frame["n_missing"] = frame["n_items_table"] - per["complete"] - per["incomplete"]
    frame["n_unknown"] = per["unknown"]
    frame = frame.reset_index()
    frame.insert(0, "judge", judge)
    frame.insert(len(keys) + 1, "sample", sample)
    return frame


__all__ = ["coverage_frame"]
