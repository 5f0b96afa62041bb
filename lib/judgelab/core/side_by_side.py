"""Two methods' versions of one table side by side, and where their conclusions differ.

When a default test changes (issue 33: the wild cluster bootstrap replaced the pairs
bootstrap, t intervals, ...), a notebook shows the earlier method beside it wherever the
choice changes a conclusion. `compare_methods` is that one merge: the same rows (by `keys`)
under both methods, each p-value and interval bound with its `_earlier` twin, and
`conclusion_changes` — significant at `alpha` under one method only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def compare_methods(
    default: pd.DataFrame,
    earlier: pd.DataFrame,
    *,
    keys: Sequence[str],
    p_columns: Sequence[str] = ("p_value",),
    interval: tuple[str, str] | None = None,
    shown: Sequence[str] = (),
    alpha: float = 0.05,
    suffix: str = "_earlier",
) -> pd.DataFrame:
    """Return two runs of one table side by side: the default and the earlier method.

    Args:
        default: The table at its default test.
        earlier: The same table under the earlier test; it may cover only some rows (those
            get missing `_earlier` columns and no change).
        keys: Columns naming a row in both; a key repeated in either table is an error.
        p_columns: The p-values compared (each gets a twin named with `suffix`).
        interval: The (low, high) columns of the interval, also shown with their twins.
        shown: Further columns of `default` kept as they are (estimate, n, clusters, ...).
        alpha: The level of the conclusions compared.
        suffix: Appended to the earlier method's columns.

    Returns:
        The rows of `default` (in order): `keys`, `shown`, each compared column beside its
        twin, and `conclusion_changes` — True where some p is below `alpha` under one method
        only. A row where either p is missing (a test declined, a row the earlier run lacks)
        is not a change: there is no conclusion to compare.
    """
    keys, compared = list(keys), [*p_columns, *(interval or ())]
    missing = [c for c in [*keys, *compared, *shown] if c not in default.columns]
    missing_earlier = [c for c in [*keys, *compared] if c not in earlier.columns]
    if missing or missing_earlier:
        raise KeyError(
            f"compare_methods: the default table lacks {missing}, the earlier one "
            f"{missing_earlier}"
        )
    for name, table in (("default", default), ("earlier", earlier)):
        repeated = table[keys].duplicated(keep=False)
        if repeated.any():
            first = table.loc[repeated, keys].iloc[0].to_dict()
            raise ValueError(f"compare_methods: the {name} table repeats the key {first}")
    twins = earlier[[*keys, *compared]].rename(columns={c: f"{c}{suffix}" for c in compared})
    out = default[[*keys, *shown, *compared]].merge(twins, on=keys, how="left")
    changes = np.zeros(len(out), dtype=bool)
    for c in p_columns:
        now, before = out[c].to_numpy(float), out[f"{c}{suffix}"].to_numpy(float)
        both = np.isfinite(now) & np.isfinite(before)
        changes |= both & ((now < alpha) != (before < alpha))
    out["conclusion_changes"] = changes
    order = [*keys, *shown, *(x for c in compared for x in (c, f"{c}{suffix}"))]
    return out[[*order, "conclusion_changes"]]


__all__ = ["compare_methods"]
