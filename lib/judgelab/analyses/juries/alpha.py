"""Krippendorff's alpha across the judges of a pool (spec 000 §4.8, Fig. 6).

The units, values and missing-value handling come from `ratings`. Alpha always comes from the
`krippendorff` package with the level of measurement passed explicitly (`nominal` for these
labels — the package would default to `interval`). Intervals are percentile intervals of a
seeded bootstrap over units (`stats.bootstrap_weights`); pooled rows bootstrap each split on
its own (stratified), as `pairwise.pairwise_rates` does.
"""

from __future__ import annotations

from typing import NamedTuple

import krippendorff
import numpy as np
import pandas as pd

from judgelab.analyses import pairwise
from judgelab.analyses.juries.ratings import RATING_CODES, ratings
from judgelab.core import stats
from judgelab.errors import check_choice

LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
ALPHA_COLUMNS: tuple[str, ...] = (
    "pool",
    "benchmark",
    "split",
    "alpha",
    "ci_low",
    "ci_high",
    "n_judges",
    "n_units",
    "n_values",
    "units",
    "tie_as_missing",
    "level_of_measurement",
)


def krippendorff_alpha(reliability_data: np.ndarray, *, level_of_measurement: str) -> float:
    """Return Krippendorff's alpha of a (coders × units) matrix, NaN for missing values.

    The level of measurement must be given (no silent `interval` default). Returns NaN when
    alpha is undefined: fewer than two values in the data, or no unit rated twice.

    >>> krippendorff_alpha(np.array([[0, 1, 0], [0, 1, 0]]), level_of_measurement="nominal")
    1.0
    """
    check_choice("level_of_measurement", level_of_measurement, LEVELS)
    data = np.asarray(reliability_data, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError(f"reliability_data must be 2-D (coders × units), got shape {data.shape}")
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    values = np.unique(data[:, pairable][~np.isnan(data[:, pairable])])
    if len(values) < 2:
        return float("nan")
    return float(
        krippendorff.alpha(reliability_data=data, level_of_measurement=level_of_measurement)
    )


def unit_coincidences(reliability_data: np.ndarray, *, n_values: int) -> np.ndarray:
    """Return each unit's contribution to the coincidence matrix (units × V × V).

    Values are integer codes 0..V-1 (NaN = missing). A unit with m ≥ 2 values adds
    n_c (n_k − [c = k]) / (m − 1) to cell (c, k); units with fewer values add nothing. The
    coincidence matrix of Krippendorff's alpha is the sum over units, so a bootstrap over
    units is a reweighted sum (`stats.bootstrap_sums`).
    """
    data = np.asarray(reliability_data, dtype=np.float64)
    ok = ~np.isnan(data)
    counts = np.stack([((data == v) & ok).sum(axis=0) for v in range(n_values)], axis=1)
    m = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(n_values)
    with np.errstate(divide="ignore", invalid="ignore"):
        contrib = outer / np.where(m > 1, m - 1, 1)[:, None, None]
    contrib[m < 2] = 0.0
    return contrib


def nominal_alpha_from_coincidences(o: np.ndarray) -> np.ndarray:
    """Return nominal alpha = 1 − (n − 1)(n − Σ o_cc) / (n² − Σ n_c²) per coincidence matrix.

    Vectorised over leading axes of `o` (…, V, V); NaN where alpha is undefined (one value).
    """
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    disagree = n - np.trace(o, axis1=-2, axis2=-1)
    expected = n**2 - (n_c**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1) * disagree / expected, np.nan)


def _alpha_replicates(
    mats: list[np.ndarray], *, level_of_measurement: str, n_boot: int, rngs: list
) -> np.ndarray:
    """Return alpha on n_boot resamples of units, each matrix (stratum) resampled on its own.

    Nominal alpha is computed from resampled coincidence matrices (vectorised; the identity
    with `krippendorff.alpha` is unit-tested); other levels call the package per resample.
    """
    if level_of_measurement == "nominal":
        n_values = len(RATING_CODES)
        total = np.zeros((n_boot, n_values * n_values))
        for m, r in zip(mats, rngs, strict=True):
            contrib = unit_coincidences(m, n_values=n_values).reshape(m.shape[1], -1)
            total += stats.bootstrap_sums(contrib, n_boot=n_boot, rng=r)
        return nominal_alpha_from_coincidences(total.reshape(n_boot, n_values, n_values))
    weights = [
        stats.bootstrap_weights(m.shape[1], n_boot=n_boot, rng=r)
        for m, r in zip(mats, rngs, strict=True)
    ]
    out = np.empty(n_boot)
    for b in range(n_boot):
        cols = [
            np.repeat(np.arange(m.shape[1]), w[b].astype(np.int64))
            for m, w in zip(mats, weights, strict=True)
        ]
        data = np.concatenate([m[:, c] for m, c in zip(mats, cols, strict=True)], axis=1)
        out[b] = krippendorff_alpha(data, level_of_measurement=level_of_measurement)
    return out


class _Stratum(NamedTuple):
    """One split of a pool: its judges and their (judges × pairable units) ratings."""

    benchmark: str
    split: str
    judges: list[str]
    matrix: np.ndarray


def alpha_table(
    judgments: pd.DataFrame,
    *,
    units: str = "item",
    tie_as_missing: bool = False,
    pool: str | None = "prompt",
    level_of_measurement: str = "nominal",
    min_judges: int = 2,
    across: str | None = "split",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return Krippendorff's alpha across the judges of each pool, per split and pooled.

    Args:
        judgments: A judgments table (see `ratings`).
        units: `item` or `item_order` (see `ratings`).
        tie_as_missing: Treat tie values as missing.
        pool: Column whose values define separate pools of judges (None: one pool).
        level_of_measurement: Passed to `krippendorff.alpha` (the labels are `nominal`).
        min_judges: Splits where fewer judges of the pool rated are left out.
        across: Add a `pooled` row per pool over the splits (units of all splits together,
            stratified bootstrap), or None.
        n_boot: Bootstrap resamples B (over units).
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `pool`, `benchmark`, `split` (or `pooled`), `alpha`, `ci_low`, `ci_high`,
        `n_judges`, `n_units` (units rated by at least two judges), `n_values` (pairable
        values), `units`, `tie_as_missing`, `level_of_measurement`.
    """
    long = ratings(judgments, units=units, tie_as_missing=tie_as_missing, pool=pool)
    rows = []
    for pool_value, pblock in long.groupby("pool", sort=True):
        strata = _strata(pblock, min_judges)
        cells = [([s], s.benchmark, s.split) for s in strata]
        if across is not None and strata:
            benches = sorted({s.benchmark for s in strata})
            cells.append((strata, ",".join(benches), pairwise.POOLED))
        for members, bench, split in cells:
            row = _alpha_row(
                members,
                level_of_measurement=level_of_measurement,
                n_boot=n_boot,
                level=level,
                rngs=[stats.rng_for(seed, "alpha", pool_value, m[0], m[1]) for m in members],
            )
            rows.append(
                {"pool": pool_value, "benchmark": bench, "split": split}
                | row
                | {
                    "units": units,
                    "tie_as_missing": tie_as_missing,
                    "level_of_measurement": level_of_measurement,
                }
            )
    return pd.DataFrame(rows, columns=list(ALPHA_COLUMNS))


def _strata(pblock: pd.DataFrame, min_judges: int) -> list[_Stratum]:
    """Return the splits of one pool rated by at least `min_judges` judges."""
    strata = []
    for (bench, split), block in pblock.groupby(["benchmark", "split"], sort=True):
        judges = sorted(block["judge"].unique())
        if len(judges) < min_judges:
            continue
        wide = block.pivot(index="judge", columns="unit", values="value").reindex(judges)
        mat = wide.to_numpy(dtype=float)
        mat = mat[:, (~np.isnan(mat)).sum(axis=0) >= 2]
        strata.append(_Stratum(bench, split, judges, mat))
    return strata


def _alpha_row(
    members: list[_Stratum],
    *,
    level_of_measurement: str,
    n_boot: int,
    level: float,
    rngs: list[np.random.Generator],
) -> dict:
    """Return alpha with its stratified bootstrap interval and counts over `members`."""
    judges = sorted({j for m in members for j in m.judges})
    # pooled strata may hold different judges: align the rows on the union
    aligned = [_align(m.matrix, m.judges, judges) for m in members]
    data = np.concatenate(aligned, axis=1)
    value = krippendorff_alpha(data, level_of_measurement=level_of_measurement)
    reps = _alpha_replicates(
        aligned, level_of_measurement=level_of_measurement, n_boot=n_boot, rngs=rngs
    )
    alpha = stats.interval_fields(value, reps, level=level, names=("alpha", "ci_low", "ci_high"))
    return alpha | {
        "n_judges": len(judges),
        "n_units": int(sum(m.matrix.shape[1] for m in members)),
        "n_values": int((~np.isnan(data)).sum()),
    }


def _align(mat: np.ndarray, judges: list[str], union: list[str]) -> np.ndarray:
    out = np.full((len(union), mat.shape[1]), np.nan)
    idx = [union.index(j) for j in judges]
    out[idx] = mat
    return out
