"""Rates with intervals over clusters: a mean per group, its interval and Wilson bounds.

Units are the table's `cluster` column by default (items that share a source document or
question stay together; without the column each item is its unit), so both orders of an
item, or every judge's row of it, stay together; `cluster=None` makes every item its own
unit (the issue-20 legacy). The default interval (`inference="wild"`) is the one every
ratio of sums in judgelab gets (`core.estimates.ratio`): it inverts the restricted wild
cluster bootstrap test, holds with few and unequal clusters, and comes with the effective
number of clusters and the `few_clusters` flag. `inference="bootstrap"` is the earlier
seeded percentile bootstrap over units (stratified by benchmark split), kept for
comparison. Where the value is 0/1 a Wilson interval (trials = rows) is given beside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analyses.length.verdicts import KEYS, item_key
from judgelab.core import clusters, estimates, stats, threads
from judgelab.core.schema import require_columns as _require
from judgelab.errors import check_choice

#: Intervals of a rate: the inverted wild cluster bootstrap (default) or the earlier
#: percentile cluster bootstrap.
INFERENCE = ("wild", "bootstrap")

#: The value columns of every rate table (`cluster_rate`, `rate_by_group`).
RATE_COLUMNS = [
    "value",
    "k",
    "n",
    "n_items",
    "n_clusters",
    "ci_low",
    "ci_high",
    "wilson_low",
    "wilson_high",
]
#: What stands behind a rate's interval (`core.estimates`), after `RATE_COLUMNS`.
SUPPORT_COLUMNS = ["n_eff_clusters", "few_clusters", "method"]


def _binary(values: np.ndarray) -> bool:
    v = values[~np.isnan(values)]
    return bool(np.isin(v, (0.0, 1.0)).all())


def unit_sums(
    values: np.ndarray, unit: np.ndarray, strata: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Return per-unit sums of `values` (rows × m) and each unit's stratum code.

    Units are the distinct values of `unit`; a unit lies in one stratum: the first in sorted
    order among its rows' (a cluster shared by two splits), so any row order gives the same.
    """
    inverse = clusters.sorted_codes(unit)
    per = clusters.sum_by(values, inverse)
    n_units = len(per)
    if strata is None:
        return per, np.zeros(n_units, dtype=np.int64)
    row_strata = pd.factorize(np.asarray(strata), sort=True)[0]
    out = np.full(n_units, np.iinfo(np.int64).max)
    np.minimum.at(out, inverse, row_strata)
    return per, pd.factorize(out, sort=True)[0]


def stratified_sums(
    per: np.ndarray, strata: np.ndarray, *, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """Return bootstrap column sums of per-unit rows `per`, resampling units within strata.

    Each stratum (a benchmark split) keeps its number of units in every resample, so a row
    pooled over splits is resampled as the splits were sampled (stratified bootstrap).
    """
    per = np.asarray(per, dtype=np.float64)
    if per.ndim == 1:
        per = per[:, None]
    out = np.zeros((n_boot, per.shape[1]))
    for s in np.unique(strata):
        out += stats.bootstrap_sums(per[strata == s], n_boot=n_boot, rng=rng)
    return out


def cluster_rate(
    value: np.ndarray,
    cluster: np.ndarray,
    *,
    n_boot: int,
    rng: np.random.Generator,
    level: float,
    items: np.ndarray | None = None,
    strata: np.ndarray | None = None,
    inference: str = "wild",
    null: float = float("nan"),
) -> dict[str, Any]:
    """Return the mean of `value` with its interval over clusters and Wilson bounds.

    NaN values are left out. `inference="wild"` (default): `core.estimates.ratio` — the
    interval inverting the restricted wild cluster bootstrap test (of `null` when given:
    `p_value`), the effective clusters and `few_clusters`. `inference="bootstrap"`: the
    earlier percentile bootstrap that resamples clusters whole (a ratio of per-cluster sums),
    within each stratum when `strata` are given.

    Args:
        value: One value per row (0/1 for a rate).
        cluster: One cluster key per row (the resampling unit).
        n_boot: Bootstrap resamples B.
        rng: The generator of the resamples.
        level: Confidence level.
        items: One item key per row, to count `n_items` (default: `cluster`).
        strata: One stratum per row (e.g. the split); clusters are resampled within strata.
        inference: `INFERENCE`.
        null: The value tested (wild only; NaN: no test).

    Returns:
        The `RATE_COLUMNS` and `SUPPORT_COLUMNS` values and `p_value`, plus `replicates`
        (the percentile bootstrap's replicates of the mean) with `inference="bootstrap"`.
    """
    check_choice("inference", inference, INFERENCE)
    ok = ~np.isnan(value)
    value, cluster = value[ok], cluster[ok]
    items = cluster if items is None else np.asarray(items)[ok]
    strata = None if strata is None else np.asarray(strata)[ok]
    n = int(value.size)
    if n == 0:
        nan = float("nan")
        return dict(
            value=nan,
            k=0.0,
            n=0,
            n_items=0,
            n_clusters=0,
            ci_low=nan,
            ci_high=nan,
            wilson_low=nan,
            wilson_high=nan,
            n_eff_clusters=0.0,
            few_clusters=True,
            method="no data",
            p_value=nan,
        )
    k = float(value.sum())
    binary = _binary(value)
    w_low, w_high = stats.wilson_interval(k, n, level=level) if binary else (np.nan, np.nan)
    common = dict(
        k=k,
        n=n,
        n_items=clusters.n_distinct(items),
        wilson_low=float(w_low),
        wilson_high=float(w_high),
    )
    if inference == "wild":
        est = estimates.ratio(
            value,
            np.ones(n),
            cluster,
            null=null,
            level=level,
            n_boot=n_boot,
            rng=rng,
            bounds=(0.0, 1.0) if bool(np.all((value >= 0) & (value <= 1))) else None,
        )
        return {**est.fields(), **common, "n": n}
    per, unit_strata = unit_sums(np.column_stack([value, np.ones(n)]), cluster, strata)
    reps = stratified_sums(per, unit_strata, n_boot=n_boot, rng=rng)
    low, high = stats.percentile_interval(
        stats.ratio_replicates(reps[:, 0], reps[:, 1]), level=level
    )
    return dict(
        value=k / n,
        **common,
        n_clusters=len(per),
        ci_low=float(low),
        ci_high=float(high),
        n_eff_clusters=np.nan,
        few_clusters=pd.NA,
        method=f"percentile cluster bootstrap (B={n_boot})",
        p_value=np.nan,
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
    cluster: str | None = clusters.COLUMN,
    inference: str = "wild",
) -> pd.DataFrame:
    """Return the mean of `value` per group with its interval over clusters and Wilson bounds.

    Rows where `value` is NaN are left out. Categorical `by` columns keep every category,
    so an empty bin appears with n = 0 (every bin shows its n). Intervals (`cluster_rate`)
    treat `cluster` units as independent (items when the column is absent or `cluster` is
    None): by default the inverted wild cluster bootstrap (`core.estimates.ratio`), or
    (`inference="bootstrap"`) the earlier percentile bootstrap resampling them within each
    benchmark split; seeded by `seed` and the group key. Wilson bounds are given when
    `value` is 0/1 (trials = rows).

    Args:
        table: One row per observation; needs `by`, `value`, `benchmark`, `split`, `item_id`.
        value: The column averaged (0/1 for a rate, or e.g. a score).
        by: Group columns.
        n_boot: Bootstrap replicates B.
        seed: Seed of the bootstrap.
        level: Confidence level.
        cluster: The column of units (None: items, the issue-20 legacy).
        inference: `INFERENCE`: `wild` (default) or `bootstrap` (the earlier percentile
            cluster bootstrap).

    Returns:
        The `by` columns, `value`, `k` (sum), `n` (rows), `n_items`, `n_clusters`
        (units), `ci_low`, `ci_high`, `wilson_low`, `wilson_high`, `n_eff_clusters`,
        `few_clusters` (fewer than `core.clusters.FEW_EFFECTIVE` effective clusters),
        `method`.
    """
    by = list(by)
    check_choice("inference", inference, INFERENCE)
    _require(table, [*by, value, *KEYS], "rate_by_group")
    frame = pd.DataFrame(
        {
            "value": table[value].astype(float).to_numpy(),
            "unit": clusters.codes(table, cluster),
            "item": item_key(table),
            "stratum": (table["benchmark"].astype(str) + "|" + table["split"].astype(str)),
        }
    )
    for b in by:  # each group column with its dtype (a categorical keeps its categories)
        frame[b] = table[b].values
    return rates_of(
        [frame], by=by, value=value, n_boot=n_boot, seed=seed, level=level, inference=inference
    )


def rates_of(
    frames: Iterable[pd.DataFrame],
    *,
    by: list[str],
    value: str,
    n_boot: int,
    seed: int,
    level: float,
    inference: str,
) -> pd.DataFrame:
    """Return `rate_by_group`'s rows from frames of the `by` columns and the values.

    Each frame holds `by`, `value`, `unit` (codes in sorted-label order), `item` (codes or
    keys) and, for the percentile bootstrap, `stratum`: one frame, or one per judge (`lazy`).
    """
    levels = []

    def pieces() -> Iterator[tuple[tuple, dict[str, np.ndarray | None]]]:
        for frame in frames:
            levels.append(frame[by].drop_duplicates())
            v, units, items = (frame[c].to_numpy() for c in ("value", "unit", "item"))
            strata = frame["stratum"].to_numpy() if "stratum" in frame else None
            grouped = frame.groupby(by, sort=True, observed=False, dropna=True)
            for key, idx in grouped.indices.items() if len(frame) else []:
                yield (
                    (key if isinstance(key, tuple) else (key,)),
                    {
                        "values": v[idx].astype(float),
                        "units": units[idx],
                        "items": items[idx],
                        "strata": None if strata is None else strata[idx],
                    },
                )

    def rate(piece: tuple[tuple, dict[str, np.ndarray | None]]) -> dict[str, Any]:
        key, arrays = piece
        rng = stats.rng_for(seed, value, *key)
        r = cluster_rate(
            arrays["values"],
            arrays["units"],
            n_boot=n_boot,
            rng=rng,
            level=level,
            items=arrays["items"],
            strata=arrays["strata"],
            inference=inference,
        )
        cols = [*RATE_COLUMNS, *SUPPORT_COLUMNS]
        return {**dict(zip(by, key, strict=True)), **{c: r[c] for c in cols}}

    # the groups at once on the machine's cores (each its own seeded generator)
    rows = threads.ordered_map(rate, pieces())
    out = pd.DataFrame(rows, columns=[*by, *RATE_COLUMNS, *SUPPORT_COLUMNS])
    seen = pd.concat(levels, ignore_index=True) if levels else pd.DataFrame(columns=by)
    cats = [c for c in by if isinstance(seen[c].dtype, pd.CategoricalDtype)]
    if cats:
        return _with_empty_categories(out, seen, by, cats)
    out["n"] = out["n"].astype(int)
    out["n_items"] = out["n_items"].astype(int)
    out["n_clusters"] = out["n_clusters"].astype(int)
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
    out["n_clusters"] = out["n_clusters"].fillna(0).astype(int)
    out["k"] = out["k"].fillna(0.0)
    out["n_eff_clusters"] = out["n_eff_clusters"].fillna(0.0)
    out["few_clusters"] = out["few_clusters"].astype(object).where(out["n"] > 0, True)
    out["method"] = out["method"].fillna("no data")
    for c in cats:
        out[c] = pd.Categorical(out[c], categories=table[c].cat.categories, ordered=True)
    return out.sort_values(by, kind="stable").reset_index(drop=True)
