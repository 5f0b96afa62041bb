"""One combinator for the per-group tables of this family (FaithEval AVG, Ragas alignment)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

#: What a per-group step returns: the rows of one group, without its group columns.
Rows = list[dict[str, Any]]


def per_group(
    df: pd.DataFrame,
    by: Sequence[str],
    rows: Callable[[tuple[Any, ...], pd.DataFrame], Rows],
    *,
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Apply `rows(key, group)` to every group of `df` by `by` and stack the rows it returns.

    Groups come sorted (categorical groups as observed); `key` is always a tuple, and each
    row gets the `by` columns (the group's key) in front of its own.

    Args:
        df: The table to group.
        by: Group columns.
        rows: Makes the rows of one group from its key and its sub-table.
        columns: Columns of the result (all of them, group columns included); None keeps the
            rows' own (an empty `df` then gives a table with no columns).

    Returns:
        One row per row returned, groups in order.

    >>> df = pd.DataFrame({"g": ["b", "a", "b"], "x": [1, 2, 3]})
    >>> per_group(df, ["g"], lambda key, g: [{"total": int(g["x"].sum())}])
       g  total
    0  a      2
    1  b      4
    """
    out: Rows = []
    for key, group in df.groupby(list(by), sort=True, observed=True):
        key = key if isinstance(key, tuple) else (key,)
        head = dict(zip(by, key, strict=True))
        out.extend({**head, **row} for row in rows(key, group))
    return pd.DataFrame(out, columns=None if columns is None else list(columns))
