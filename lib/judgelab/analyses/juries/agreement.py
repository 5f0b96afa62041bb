"""Agreement between judges: Krippendorff's alpha, Cohen's kappa and error correlation.

Spec 000 §4.8 (alpha, Fig. 6) leaves the units, values and missing-value handling open; they
are parameters here:

- `units="item"` (default): a unit is an item; a judge's value is its consolidated label
  (pos/neg/tie, `juries.consolidated_labels`: tie for inconsistent or invalid pairs);
- `units="item_order"`: a unit is one presentation of an item; the value is the raw `chosen`
  (pos/neg/tie), an invalid output is missing;
- `tie_as_missing=True` treats tie values as missing (pos against neg only).

Alpha always comes from the `krippendorff` package with the level of measurement passed
explicitly (`nominal` for these labels — the package would default to `interval`). Intervals
are percentile intervals of a seeded bootstrap over units (`stats.bootstrap_weights`);
pooled rows bootstrap each split on its own (stratified), as `metrics.pairwise_rates` does.
"""

from __future__ import annotations

from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd

from judgelab.analyses.juries import juries
from judgelab.analyses.pairwise import metrics
from judgelab.core import stats
from judgelab.core.schema import require_columns as _require

UNITS: tuple[str, ...] = ("item", "item_order")
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
_CODE = {"pos": 0.0, "neg": 1.0, "tie": 2.0}


def krippendorff_alpha(reliability_data: np.ndarray, *, level_of_measurement: str) -> float:
    """Return Krippendorff's alpha of a (coders × units) matrix, NaN for missing values.

    The level of measurement must be given (no silent `interval` default). Returns NaN when
    alpha is undefined: fewer than two values in the data, or no unit rated twice.

    >>> krippendorff_alpha(np.array([[0, 1, 0], [0, 1, 0]]), level_of_measurement="nominal")
    1.0
    """
    if level_of_measurement not in LEVELS:
        raise ValueError(
            f"level_of_measurement must be one of {LEVELS}, got {level_of_measurement!r}"
        )
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
        NaN = missing).
    """
    if units not in UNITS:
        raise ValueError(f"units must be one of {UNITS}, got {units!r}")
    _require(judgments, ["judge", "benchmark", "split", "sample"], "ratings")
    data = judgments[judgments["sample"] == 0]
    if pool is None:
        data = data.assign(pool="all")
    else:
        _require(data, [pool], "ratings")
        data = data.assign(pool=data[pool])
    if units == "item":
        lab = juries.consolidated_labels(data, groups=("judge", "pool", "benchmark", "split"))
        out = lab[["pool", "benchmark", "split", "item_id", "judge"]].rename(
            columns={"item_id": "unit"}
        )
        out["value"] = lab["label"].map(_CODE).astype(float)
    else:
        _require(data, ["item_id", "order", "valid", "chosen"], "ratings")
        valid = data["valid"].astype("boolean").fillna(False).to_numpy(dtype=bool)
        value = data["chosen"].astype(object).map(_CODE).astype(float).where(valid)
        out = data[["pool", "benchmark", "split", "judge"]].copy()
        out.insert(3, "unit", data["item_id"].astype(str) + "#" + data["order"].astype(str))
        out["value"] = value.to_numpy()
    if tie_as_missing:
        out.loc[out["value"] == _CODE["tie"], "value"] = np.nan
    return out.reset_index(drop=True)


def _matrix(block: pd.DataFrame, judges: list[str]) -> np.ndarray:
    wide = block.pivot(index="judge", columns="unit", values="value").reindex(judges)
    return wide.to_numpy(dtype=float)


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
        n_values = len(_CODE)
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
        strata = []
        for (bench, split), block in pblock.groupby(["benchmark", "split"], sort=True):
            judges = sorted(block["judge"].unique())
            if len(judges) < min_judges:
                continue
            mat = _matrix(block, judges)
            mat = mat[:, (~np.isnan(mat)).sum(axis=0) >= 2]
            rng = stats.rng_for(seed, "alpha", pool_value, bench, split)
            strata.append((bench, split, judges, mat, rng))
        cells = [([s], s[0], s[1]) for s in strata]
        if across is not None and strata:
            benches = sorted({s[0] for s in strata})
            cells.append((strata, ",".join(benches), metrics.POOLED))
        for members, bench, split in cells:
            mats = [m[3] for m in members]
            judges = sorted({j for m in members for j in m[2]})
            # pooled strata may hold different judges: align the rows on the union
            aligned = [_align(m[3], m[2], judges) for m in members]
            data = np.concatenate(aligned, axis=1)
            value = krippendorff_alpha(data, level_of_measurement=level_of_measurement)
            reps = _alpha_replicates(
                aligned,
                level_of_measurement=level_of_measurement,
                n_boot=n_boot,
                rngs=[stats.rng_for(seed, "alpha", pool_value, m[0], m[1]) for m in members],
            )
            low, high = stats.percentile_interval(reps, level=level)
            rows.append(
                {
                    "pool": pool_value,
                    "benchmark": bench,
                    "split": split,
                    "alpha": value,
                    "ci_low": float(low),
                    "ci_high": float(high),
                    "n_judges": len(judges),
                    "n_units": int(sum(m.shape[1] for m in mats)),
                    "n_values": int((~np.isnan(data)).sum()),
                    "units": units,
                    "tie_as_missing": tie_as_missing,
                    "level_of_measurement": level_of_measurement,
                }
            )
    columns = [
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
    ]
    return pd.DataFrame(rows, columns=columns)


def _align(mat: np.ndarray, judges: list[str], union: list[str]) -> np.ndarray:
    out = np.full((len(union), mat.shape[1]), np.nan)
    idx = [union.index(j) for j in judges]
    out[idx] = mat
    return out


def _pair_cells(
    judgments: pd.DataFrame,
    *,
    pool: str | None,
    across: str | None,
    value: str,
) -> list[tuple[dict, pd.DataFrame, list[tuple[str, pd.DataFrame]]]]:
    """Return (key, wide units × judges, strata) per pool × split, plus pooled cells."""
    if value == "label":
        long = ratings(judgments, units="item", pool=pool)
    else:
        data = judgments[judgments["sample"] == 0]
        data = data.assign(pool="all" if pool is None else data[pool])
        lab = juries.consolidated_labels(data, groups=("judge", "pool", "benchmark", "split"))
        lab = lab[lab["has_gold"].astype(bool)]
        long = lab[["pool", "benchmark", "split", "item_id", "judge"]].rename(
            columns={"item_id": "unit"}
        )
        # an error is a pair that is not consistently correct (the CA definition)
        long["value"] = (lab["label"] != "pos").astype(float).to_numpy()
    cells: list[tuple[dict, pd.DataFrame, list[tuple[str, pd.DataFrame]]]] = []
    for pool_value, pblock in long.groupby("pool", sort=True):
        split_cells = []
        for (bench, split), block in pblock.groupby(["benchmark", "split"], sort=True):
            wide = block.pivot(index="unit", columns="judge", values="value")
            key = {"pool": pool_value, "benchmark": bench, "split": split}
            split_cells.append((key, wide, [(f"{bench}/{split}", wide)]))
        cells += split_cells
        if across is not None and split_cells:
            judges = sorted({j for _, w, _ in split_cells for j in w.columns})
            benches = ",".join(sorted({k["benchmark"] for k, _, _ in split_cells}))
            key = {"pool": pool_value, "benchmark": benches, "split": metrics.POOLED}
            strata = [s for _, _, st in split_cells for s in st]
            cells.append((key, pd.DataFrame(columns=judges), strata))
    return cells


def _column(strata: list[tuple[str, pd.DataFrame]], judge: str) -> pd.Series:
    parts = [w[judge] for _, w in strata if judge in w.columns]
    return pd.concat(parts, ignore_index=True) if parts else pd.Series(dtype=float)


def cohen_kappa_matrix(
    judgments: pd.DataFrame,
    *,
    pool: str | None = "prompt",
    across: str | None = "split",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return Cohen's kappa between every two judges of a pool on their consolidated labels.

    Kappa = (p_o − p_e) / (1 − p_e) over the items both judges rated (labels pos/neg/tie);
    the interval is a bootstrap over those items (pooled rows: stratified by split).

    Args:
        judgments: A judgments table (see `ratings`).
        pool: Column whose values define separate pools of judges (None: one pool).
        across: Add `pooled` rows over the splits, or None.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `pool`, `benchmark`, `split`, `judge_1`, `judge_2` (both orders, diagonal = 1),
        `kappa`, `ci_low`, `ci_high`, `agreement` (p_o), `n` (items both rated).
    """
    rows = []
    for key, wide, strata in _pair_cells(judgments, pool=pool, across=across, value="label"):
        judges = sorted(wide.columns)
        for j1, j2 in combinations(judges, 2):
            conf, reps = _pair_bootstrap(strata, j1, j2, key, seed, n_boot, n_values=3)
            k = float(stats.kappa_from_confusion(conf))
            low, high = stats.percentile_interval(stats.kappa_from_confusion(reps), level=level)
            n = int(conf.sum())
            base = {
                **key,
                "kappa": k,
                "ci_low": float(low),
                "ci_high": float(high),
                "agreement": float(np.trace(conf) / n) if n else np.nan,
                "n": n,
            }
            rows.append({"judge_1": j1, "judge_2": j2, **base})
            rows.append({"judge_1": j2, "judge_2": j1, **base})
        for j in judges:
            n = int(_column(strata, j).notna().sum())
            rows.append(
                {
                    "judge_1": j,
                    "judge_2": j,
                    **key,
                    "kappa": 1.0,
                    "ci_low": 1.0,
                    "ci_high": 1.0,
                    "agreement": 1.0,
                    "n": n,
                }
            )
    columns = [
        "pool",
        "benchmark",
        "split",
        "judge_1",
        "judge_2",
        "kappa",
        "ci_low",
        "ci_high",
        "agreement",
        "n",
    ]
    return pd.DataFrame(rows, columns=columns)


def _pair_bootstrap(
    strata: list[tuple[str, pd.DataFrame]],
    j1: str,
    j2: str,
    key: dict,
    seed: int,
    n_boot: int,
    n_values: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Return confusion counts (V × V) of two judges and their bootstrap replicates."""
    conf = np.zeros((n_values, n_values))
    reps = np.zeros((n_boot, n_values, n_values))
    for name, w in strata:
        if j1 not in w.columns or j2 not in w.columns:
            continue
        pair = w[[j1, j2]].dropna().to_numpy(dtype=np.int64)
        onehot = np.zeros((len(pair), n_values * n_values))
        onehot[np.arange(len(pair)), pair[:, 0] * n_values + pair[:, 1]] = 1.0
        rng = stats.rng_for(seed, "pair", key["pool"], name, j1, j2)
        reps += stats.bootstrap_sums(onehot, n_boot=n_boot, rng=rng).reshape(
            n_boot, n_values, n_values
        )
        conf += onehot.sum(axis=0).reshape(n_values, n_values)
    return conf, reps


def error_correlation(
    judgments: pd.DataFrame,
    *,
    pool: str | None = "prompt",
    across: str | None = "split",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Return how much two judges fail on the same items: phi of their error indicators.

    An *error* is an item with gold that the judge did not get consistently right (CA = 0).
    Phi is the Pearson correlation of two judges' 0/1 error vectors on the items both
    judged: (p_11 − p_1 p_2) / sqrt(p_1 (1 − p_1) p_2 (1 − p_2)); NaN when a judge never or
    always errs. High phi means shared failures, which a majority vote cannot fix.

    Args:
        judgments: A judgments table with gold (`correct` not null).
        pool: Column whose values define separate pools of judges (None: one pool).
        across: Add `pooled` rows over the splits, or None.
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `pool`, `benchmark`, `split`, `judge_1`, `judge_2` (both orders, diagonal = 1), `phi`,
        `ci_low`, `ci_high`, `error_1`, `error_2` (error rates), `both_wrong` (p_11),
        `expected_both_wrong` (p_1 p_2, if errors were independent), `n`.
    """
    rows = []
    for key, wide, strata in _pair_cells(judgments, pool=pool, across=across, value="error"):
        judges = sorted(wide.columns)
        for j1, j2 in combinations(judges, 2):
            conf, reps = _pair_bootstrap(strata, j1, j2, key, seed, n_boot, n_values=2)
            phi = float(_phi(conf))
            low, high = stats.percentile_interval(_phi(reps), level=level)
            n = conf.sum()
            e1, e2 = conf[1].sum() / n if n else np.nan, conf[:, 1].sum() / n if n else np.nan
            base = {**key, "phi": phi, "ci_low": float(low), "ci_high": float(high)}
            both = conf[1, 1] / n if n else np.nan
            rows.append(
                {
                    "judge_1": j1,
                    "judge_2": j2,
                    **base,
                    "error_1": e1,
                    "error_2": e2,
                    "both_wrong": both,
                    "expected_both_wrong": e1 * e2,
                    "n": int(n),
                }
            )
            rows.append(
                {
                    "judge_1": j2,
                    "judge_2": j1,
                    **base,
                    "error_1": e2,
                    "error_2": e1,
                    "both_wrong": both,
                    "expected_both_wrong": e1 * e2,
                    "n": int(n),
                }
            )
        for j in judges:
            e = _column(strata, j).dropna()
            rate = float(e.mean()) if len(e) else np.nan
            rows.append(
                {
                    "judge_1": j,
                    "judge_2": j,
                    **key,
                    "phi": 1.0,
                    "ci_low": 1.0,
                    "ci_high": 1.0,
                    "error_1": rate,
                    "error_2": rate,
                    "both_wrong": rate,
                    "expected_both_wrong": rate * rate,
                    "n": len(e),
                }
            )
    columns = [
        "pool",
        "benchmark",
        "split",
        "judge_1",
        "judge_2",
        "phi",
        "ci_low",
        "ci_high",
        "error_1",
        "error_2",
        "both_wrong",
        "expected_both_wrong",
        "n",
    ]
    return pd.DataFrame(rows, columns=columns)


def _phi(conf: np.ndarray) -> np.ndarray:
    """Return phi from 2 × 2 counts (..., 2, 2) with index 1 = error."""
    n = conf.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        p11 = conf[..., 1, 1] / n
        p1 = conf[..., 1, :].sum(axis=-1) / n
        p2 = conf[..., :, 1].sum(axis=-1) / n
        den = np.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
        return np.where(den > 0, (p11 - p1 * p2) / np.where(den > 0, den, 1.0), np.nan)


def mean_off_diagonal(table: pd.DataFrame, *, value: str = "phi") -> pd.DataFrame:
    """Return the mean of a pairwise statistic over distinct judge pairs per pool × split.

    Returns:
        `pool`, `benchmark`, `split`, `mean_<value>`, `n_pairs`.
    """
    _require(table, ["pool", "split", "judge_1", "judge_2", value], "mean_off_diagonal")
    off = table[table["judge_1"] < table["judge_2"]]
    out = off.groupby(["pool", "benchmark", "split"], sort=False)[value].agg(["mean", "count"])
    return out.rename(columns={"mean": f"mean_{value}", "count": "n_pairs"}).reset_index()


def jury_context(summary: pd.DataFrame, kappa: pd.DataFrame, errors: pd.DataFrame) -> pd.DataFrame:
    """Return the jury summary beside the pool's mean kappa and mean error correlation.

    Args:
        summary: Output of `juries.jury_summary`.
        kappa: Output of `cohen_kappa_matrix`.
        errors: Output of `error_correlation`.

    Returns:
        Per pool × split: `best_judge_ca`, `best_jury_ca`, `best_jury_diff_vs_best`,
        `share_beating_best`, `mean_kappa`, `mean_phi` and `n`.
    """
    keys = ["pool", "benchmark", "split"]
    _require(summary, [*keys, "best_jury_ca"], "jury_context")
    cols = [
        *keys,
        "vote_rule",
        "best_judge_ca",
        "best_jury_ca",
        "best_jury_diff_vs_best",
        "share_beating_best",
        "n",
    ]
    base = mean_off_diagonal(kappa, value="kappa")[[*keys, "mean_kappa"]]
    base = base.merge(
        mean_off_diagonal(errors, value="phi")[[*keys, "mean_phi"]], on=keys, how="outer"
    )
    base = base.astype({k: object for k in keys})
    # pools without a scored jury (no gold) keep their agreement numbers
    out = base.merge(summary[cols].astype({k: object for k in keys}), on=keys, how="left")
    return out[[*cols, "mean_kappa", "mean_phi"]]
