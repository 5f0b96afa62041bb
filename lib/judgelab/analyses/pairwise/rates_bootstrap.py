"""The earlier percentile cluster bootstrap of `pairwise_rates` (`inference="bootstrap"`).

Each (group, sample) cell holds its column sums and bootstrap replicate sums over its
resampling units (`resample`); the rows carry the t-expanded percentile interval and, on the
position test's row, an adaptive bootstrap p-value. `scan` builds the same cells from a scan.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from judgelab.analyses.pairwise import resample
from judgelab.analyses.pairwise.rate_metrics import (
    MEAN_OF_SPLITS,
    METRICS,
    POOLED,
    POSITION_TEST,
    TESTED,
    _Boot,
    _Layout,
)
from judgelab.core import stats


class _Cell(NamedTuple):
    """One (group, sample): key, column sums, replicates, incomplete items, unit rows."""

    key: tuple
    sums: np.ndarray
    reps: np.ndarray
    incomplete: float
    strata: resample.Strata


def _split_cells(
    outcomes: pd.DataFrame, values: np.ndarray, keys: list[str], lay: _Layout, boot: _Boot
) -> list[_Cell]:
    """Return the sums, unit rows and bootstrap replicate sums of every (group, sample) cell."""
    incomplete = (~outcomes["complete"].to_numpy(dtype=bool)).astype(float)
    complete = outcomes["complete"].to_numpy(dtype=bool)
    cells = []
    grouped = outcomes.groupby(keys, sort=False, observed=True, dropna=False)
    for key, idx in grouped.indices.items():
        key = key if isinstance(key, tuple) else (key,)
        idx = np.asarray(idx)
        keep = idx[complete[idx]]
        codes = resample.unit_codes(outcomes.iloc[keep], boot.cluster) if len(keep) else None
        units = resample.unit_rows(values[keep], codes)
        rng = stats.rng_for(boot.seed, *key)
        reps = stats.bootstrap_sums(units, n_boot=boot.n_boot, rng=rng)
        strata = resample.Strata([units])
        cells.append(_Cell(key, units.sum(axis=0), reps, float(incomplete[idx].sum()), strata))
    return cells


def _position_p(cell: _Cell, lay: _Layout, boot: _Boot, key: tuple) -> tuple[float, bool, int]:
    """Return (p, bound, replicates) of the position test on one (split or pooled) cell."""
    m = list(METRICS).index(POSITION_TEST[0])
    num, den = int(lay.num[m]), int(lay.den[m])
    if cell.sums[den] <= 0:
        return float("nan"), False, 0
    first = stats.ratio_replicates(cell.reps[:, num], cell.reps[:, den])
    rng = stats.rng_for(boot.seed, "position_p", *key)
    out = resample.ratio_p(
        cell.strata, num, den, first=first, rng=rng, null=POSITION_TEST[1], n_boot=boot.n_boot
    )
    return out.p, out.bound, out.n_boot


def _ratio_frame(
    key: dict, aggregation: str, cell: _Cell, lay: _Layout, boot: _Boot
) -> pd.DataFrame:
    """Return the rates of one cell (a split or the pooled cell): Σ num / Σ den per metric."""
    sums, reps = cell.sums, cell.reps
    value = stats.ratio_replicates(sums[lay.num], sums[lay.den])
    low, high = resample.interval(
        stats.ratio_replicates(reps[:, lay.num], reps[:, lay.den]),
        level=boot.level,
        df=cell.strata.df,
        method=boot.interval,
    )
    w_low, w_high = stats.wilson_interval(sums[lay.num], sums[lay.den], level=boot.level)
    p, bound, n_p = _position_p(cell, lay, boot, (aggregation, *key.values()))
    tested = np.isin(list(METRICS), TESTED)
    return _rates_frame(
        key,
        aggregation,
        value=value,
        k=sums[lay.num],
        n=sums[lay.den],
        ci=(low, high),
        wilson=(np.where(lay.binomial, w_low, np.nan), np.where(lay.binomial, w_high, np.nan)),
        counts=(sums[lay.complete], sums[lay.has_gold], cell.incomplete, cell.strata.n_units),
        test=(np.where(tested, p, np.nan), tested & bound, np.where(tested, n_p, 0)),
    )


def _aggregate_frames(
    base: dict, across: str, members: list[_Cell], lay: _Layout, boot: _Boot
) -> list[pd.DataFrame]:
    """Return the `pooled` and `mean_of_splits` rates over the member cells of one key.

    Both are stratified: a replicate sums (or averages) the members' own replicates, each
    split resampled on its own. The strata keep the members' kind (`resample.Strata`, or
    `scan_units.UnitStrata` for the cells of `scan`).
    """
    sums = np.sum([m.sums for m in members], axis=0)
    reps = np.sum([m.reps for m in members], axis=0)
    inc = float(sum(m.incomplete for m in members))
    strata = type(members[0].strata)([u for m in members for u in m.strata.members])
    cell = _Cell((), sums, reps, inc, strata)
    pooled = _ratio_frame({**base, across: POOLED}, POOLED, cell, lay, boot)
    split_rates = np.stack(
        [stats.ratio_replicates(m.sums[lay.num], m.sums[lay.den]) for m in members]
    )
    split_reps = np.stack(
        [stats.ratio_replicates(m.reps[:, lay.num], m.reps[:, lay.den]) for m in members]
    )
    point, rep_mean = _nanmean0(split_rates), _nanmean0(split_reps)
    nan = np.full(len(lay.num), np.nan)
    mean = _rates_frame(
        {**base, across: MEAN_OF_SPLITS},
        MEAN_OF_SPLITS,
        value=point,
        k=nan,
        n=sums[lay.den],
        ci=resample.interval(rep_mean, level=boot.level, df=strata.df, method=boot.interval),
        wilson=(nan, nan),
        counts=(sums[lay.complete], sums[lay.has_gold], inc, strata.n_units),
        test=(nan, np.zeros(len(nan), dtype=bool), np.zeros(len(nan), dtype=int)),
    )
    return [pooled, mean]


def _nanmean0(a: np.ndarray) -> np.ndarray:
    """Return the mean over axis 0 ignoring NaN, NaN (no warning) where all are NaN."""
    ok = ~np.isnan(a)
    count = ok.sum(axis=0)
    total = np.where(ok, a, 0.0).sum(axis=0)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _rates_frame(
    key: dict,
    aggregation: str,
    *,
    value: np.ndarray,
    k: np.ndarray,
    n: np.ndarray,
    ci: tuple[np.ndarray, np.ndarray],
    wilson: tuple[np.ndarray, np.ndarray],
    counts: tuple[float, float, float, int],
    test: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            **{c: [v] * len(METRICS) for c, v in key.items()},
            "aggregation": aggregation,
            "metric": list(METRICS),
            "value": value,
            "k": k,
            "n": n,
            "n_clusters": counts[3],
            "ci_low": ci[0],
            "ci_high": ci[1],
            "wilson_low": wilson[0],
            "wilson_high": wilson[1],
            "n_items": counts[0],
            "n_gold": counts[1],
            "n_incomplete": counts[2],
            "p_value": test[0],
            "p_bound": test[1],
            "n_boot_p": test[2],
        }
    )
