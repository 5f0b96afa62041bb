"""Error correlation: how much two judges fail on the same items (phi of error indicators)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.analyses.juries import resample
from judgelab.analyses.juries.pairs import (
    DIAGONAL_INTERVAL,
    PAIR_INTERVAL_COLUMNS,
    PairCell,
    judge_column,
    pair_cells,
    pair_fields,
    pair_table,
)
from judgelab.analyses.juries.ratings import unit_clusters
from judgelab.analyses.juries.votes import greedy_pools, pool_labels
from judgelab.errors import check_choice

ERROR_COLUMNS: tuple[str, ...] = (
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
    *PAIR_INTERVAL_COLUMNS,
)


def error_indicators(judgments: pd.DataFrame, *, pool: str | None = "prompt") -> pd.DataFrame:
    """Return per judge and item with gold whether the judge erred (not consistently correct).

    Returns:
        `pool`, `benchmark`, `split`, `unit` (the item), `judge`, `value` (1.0 = error),
        `item`, `cluster` (the item's resampling unit).
    """
    lab = pool_labels(greedy_pools(judgments, pool, "error_correlation"))
    lab = lab[lab["has_gold"].astype(bool)]
    long = lab[["pool", "benchmark", "split", "item_id", "judge"]].rename(
        columns={"item_id": "unit"}
    )
    # an error is a pair that is not consistently correct (the CA definition)
    long["value"] = (lab["label"] != "pos").astype(float).to_numpy()
    long["item"] = lab["item_id"].astype(str).to_numpy()
    long["cluster"] = unit_clusters(lab)
    return long


def error_correlation(
    judgments: pd.DataFrame,
    *,
    pool: str | None = "prompt",
    across: str | None = "split",
    pool_strata: str = "same_judges",
    cluster: str | None = "cluster",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    interval: str = "jackknife",
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
        pool_strata: `same_judges` (default: pooled rows only over splits rated by the same
            judges, one per judge set) or `all` (legacy: every split).
        cluster: Resampling unit: `cluster` (default: the items' cluster, else the item),
            `item`, or None (units on their own: legacy).
        n_boot: Bootstrap resamples B (`bca`, `percentile`).
        seed: Seed of the bootstrap.
        level: Confidence level.
        interval: `jackknife` (default: bias-corrected cluster jackknife, t on the effective
            clusters), `bca` or `percentile` (the earlier default); `resample.smooth_fields`.

    Returns:
        `pool`, `benchmark`, `split`, `judge_1`, `judge_2` (both orders, diagonal = 1), `phi`,
        `ci_low`, `ci_high`, `error_1`, `error_2` (error rates), `both_wrong` (p_11),
        `expected_both_wrong` (p_1 p_2, if errors were independent), `n`, `bias`, `se`,
        `interval`, `n_clusters`, `n_eff_clusters`, `few_clusters`, `method`.
    """
    check_choice("interval", interval, resample.SMOOTH_INTERVALS)
    cells = pair_cells(
        error_indicators(judgments, pool=pool),
        across=across,
        cluster=cluster,
        pool_strata=pool_strata,
    )

    def pair(cell: PairCell, j1: str, j2: str) -> dict:
        conf, fields = pair_fields(
            cell,
            j1,
            j2,
            _phi,
            n_values=2,
            interval=interval,
            seed=seed,
            n_boot=n_boot,
            level=level,
        )
        phi = {"phi": float(_phi(conf))} | fields
        n = conf.sum()
        e1, e2 = conf[1].sum() / n if n else np.nan, conf[:, 1].sum() / n if n else np.nan
        return phi | {
            "error_1": e1,
            "error_2": e2,
            "both_wrong": conf[1, 1] / n if n else np.nan,
            "expected_both_wrong": e1 * e2,
            "n": int(n),
        }

    def diagonal(cell: PairCell, judge: str) -> dict:
        e = judge_column(cell.strata, judge).dropna()
        rate = float(e.mean()) if len(e) else np.nan
        return {
            "phi": 1.0,
            "ci_low": 1.0,
            "ci_high": 1.0,
            "error_1": rate,
            "error_2": rate,
            "both_wrong": rate,
            "expected_both_wrong": rate * rate,
            "n": len(e),
        } | DIAGONAL_INTERVAL

    return pair_table(cells, pair, diagonal, columns=ERROR_COLUMNS, swap=[("error_1", "error_2")])


def _phi(conf: np.ndarray) -> np.ndarray:
    """Return phi from 2 × 2 counts (..., 2, 2) with index 1 = error."""
    n = conf.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        p11 = conf[..., 1, 1] / n
        p1 = conf[..., 1, :].sum(axis=-1) / n
        p2 = conf[..., :, 1].sum(axis=-1) / n
        den = np.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
        return np.where(den > 0, (p11 - p1 * p2) / np.where(den > 0, den, 1.0), np.nan)
