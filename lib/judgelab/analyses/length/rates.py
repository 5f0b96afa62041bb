"""Rates with intervals over items: a mean per group, a bootstrap over items and Wilson bounds.

Rates come with a seeded percentile bootstrap over items (`judgelab.core.stats`), so both
orders of an item, or every judge's row of it, stay together; where the value is 0/1 a Wilson
interval (trials = rows) is given beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.length.verdicts import KEYS, item_key
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require

#: The value columns of every rate table (`cluster_rate`, `rate_by_group`).
RATE_COLUMNS = ["value", "k", "n", "n_items", "ci_low", "ci_high", "wilson_low", "wilson_high"]


def _binary(values: np.ndarray) -> bool:
    v = values[~np.isnan(values)]
    return bool(np.isin(v, (0.0, 1.0)).all())


def cluster_rate(
    value: np.ndarray,
    cluster: np.ndarray,
    *,
    n_boot: int,
    rng: np.random.Generator,
    level: float,
) -> dict[str, Any]:
    """Return the mean of `value` with a percentile bootstrap over clusters and Wilson bounds.

    NaN values are left out. Clusters are items (`verdicts.item_key`): the bootstrap resamples
    them whole.

    Args:
        value: One value per row (0/1 for a rate).
        cluster: One cluster key per row.
        n_boot: Bootstrap resamples B.
        rng: The generator of the resamples.
        level: Confidence level.

    Returns:
        The `RATE_COLUMNS` values, plus `replicates` (the bootstrap replicates of the mean)
        when there is at least one value.
    """
    ok = ~np.isnan(value)
    value, cluster = value[ok], cluster[ok]
    n = int(value.size)
    if n == 0:
        nan = float("nan")
        return dict(
            value=nan,
            k=0.0,
            n=0,
            n_items=0,
            ci_low=nan,
            ci_high=nan,
            wilson_low=nan,
            wilson_high=nan,
        )
    codes, inverse = np.unique(cluster, return_inverse=True)
    per = np.zeros((len(codes), 2))
    np.add.at(per[:, 0], inverse, value)
    np.add.at(per[:, 1], inverse, 1.0)
    reps = stats.bootstrap_sums(per, n_boot=n_boot, rng=rng)
    low, high = stats.percentile_interval(
        stats.ratio_replicates(reps[:, 0], reps[:, 1]), level=level
    )
    k = float(value.sum())
    if _binary(value):
        w_low, w_high = stats.wilson_interval(k, n, level=level)
    else:
        w_low = w_high = np.nan
    return dict(
        value=k / n,
        k=k,
        n=n,
        n_items=len(codes),
        ci_low=float(low),
        ci_high=float(high),
        wilson_low=float(w_low),
        wilson_high=float(w_high),
        replicates=stats.ratio_replicates(reps[:, 0], reps[:, 1]),
    )


def rate_by_group(
    table: pd.DataFrame,
    *,
    value: str = "correct",
    by: Sequence[str] = ("judge",),
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return the mean of `value` per group with a bootstrap over items and Wilson bounds.

    Rows where `value` is NaN are left out. Categorical `by` columns keep every category,
    so an empty bin appears with n = 0 (every bin shows its n). The bootstrap resamples
    items (`benchmark`, `split`, `item_id`), seeded by `seed` and the group key; Wilson
    bounds are given when `value` is 0/1 (trials = rows).

    Args:
        table: One row per observation; needs `by`, `value`, `benchmark`, `split`, `item_id`.
        value: The column averaged (0/1 for a rate, or e.g. a score).
        by: Group columns.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        The `by` columns, `value`, `k` (sum), `n` (rows), `n_items`, `ci_low`, `ci_high`,
        `wilson_low`, `wilson_high`.
    """
    by = list(by)
    _require(table, [*by, value, *KEYS], "rate_by_group")
    v = table[value].astype(float).to_numpy()
    items = item_key(table)
    rows = []
    grouped = table.groupby(by, sort=True, observed=False, dropna=True)
    for key, idx in grouped.indices.items() if len(table) else []:
        key = key if isinstance(key, tuple) else (key,)
        rng = stats.rng_for(seed, value, *key)
        r = cluster_rate(v[idx], items[idx], n_boot=n_boot, rng=rng, level=level)
        rows.append({**dict(zip(by, key, strict=True)), **{c: r[c] for c in RATE_COLUMNS}})
    out = pd.DataFrame(rows, columns=[*by, *RATE_COLUMNS])
    cats = [c for c in by if isinstance(table[c].dtype, pd.CategoricalDtype)]
    if cats:
        return _with_empty_categories(out, table, by, cats)
    out["n"] = out["n"].astype(int)
    out["n_items"] = out["n_items"].astype(int)
    return out


def _with_empty_categories(
    out: pd.DataFrame, table: pd.DataFrame, by: list[str], cats: list[str]
) -> pd.DataFrame:
    """Add the categories with no rows at all (groupby.indices skips them) with n = 0."""
    levels = [
        table[c].cat.categories if c in cats else pd.Index(table[c].dropna().unique()) for c in by
    ]
    full = pd.MultiIndex.from_product(levels, names=by).to_frame(index=False)
    out = full.merge(out.astype({c: object for c in by}), on=by, how="left")
    out["n"] = out["n"].fillna(0).astype(int)
    out["n_items"] = out["n_items"].fillna(0).astype(int)
    out["k"] = out["k"].fillna(0.0)
    for c in cats:
        out[c] = pd.Categorical(out[c], categories=table[c].cat.categories, ordered=True)
    return out.sort_values(by, kind="stable").reset_index(drop=True)
