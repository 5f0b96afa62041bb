"""Cohen's kappa between every two judges of a pool on their consolidated labels.

Kappa is a smooth function of the confusion counts, summed over clusters: its interval is by
default the bias-corrected cluster jackknife with t on the effective clusters
(`resample.smooth_fields`; `interval="percentile"`: the percentile cluster bootstrap, the
earlier default), and every pair reports its bias estimate and effective clusters.
"""

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
from judgelab.analyses.juries.ratings import RATING_CODES, ratings
from judgelab.core import stats
from judgelab.errors import check_choice

KAPPA_COLUMNS: tuple[str, ...] = (
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
    *PAIR_INTERVAL_COLUMNS,
)


def cohen_kappa_matrix(
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
    """Return Cohen's kappa between every two judges of a pool on their consolidated labels.

    Kappa = (p_o − p_e) / (1 − p_e) over the items both judges rated (labels pos/neg/tie);
    the interval resamples the clusters of those items (their `cluster`, else the item;
    pooled rows: over splits rated by the same judges): by default the bias-corrected
    cluster jackknife with t on the effective clusters.

    Args:
        judgments: A judgments table (see `ratings`).
        pool: Column whose values define separate pools of judges (None: one pool).
        across: Add `pooled` rows over the splits, or None.
        pool_strata: `same_judges` (default: pooled rows only over splits rated by the same
            judges, one per judge set) or `all` (legacy: every split).
        cluster: Resampling unit: `cluster` (default: the items' cluster, else the item),
            `item`, or None (units on their own: legacy).
        n_boot: Bootstrap resamples B (`bca`, `percentile`).
        seed: Seed of the bootstrap.
        level: Confidence level.
        interval: `jackknife` (default), `bca` or `percentile` (the earlier default; pooled
            rows stratified by split); see `resample.smooth_fields`.

    Returns:
        `pool`, `benchmark`, `split`, `judge_1`, `judge_2` (both orders, diagonal = 1),
        `kappa`, `ci_low`, `ci_high`, `agreement` (p_o), `n` (items both rated), `bias`,
        `se`, `interval`, `n_clusters`, `n_eff_clusters`, `few_clusters`, `method`.
    """
    check_choice("interval", interval, resample.SMOOTH_INTERVALS)
    cells = pair_cells(
        ratings(judgments, units="item", pool=pool),
        across=across,
        cluster=cluster,
        pool_strata=pool_strata,
    )

    def pair(cell: PairCell, j1: str, j2: str) -> dict:
        conf, fields = pair_fields(
            cell,
            j1,
            j2,
            stats.kappa_from_confusion,
            n_values=len(RATING_CODES),
            interval=interval,
            seed=seed,
            n_boot=n_boot,
            level=level,
        )
        n = int(conf.sum())
        kappa = float(stats.kappa_from_confusion(conf))
        agreement = float(np.trace(conf) / n) if n else np.nan
        return {"kappa": kappa, "agreement": agreement, "n": n} | fields

    def diagonal(cell: PairCell, judge: str) -> dict:
        n = int(judge_column(cell.strata, judge).notna().sum())
        one = {"kappa": 1.0, "ci_low": 1.0, "ci_high": 1.0, "agreement": 1.0, "n": n}
        return one | DIAGONAL_INTERVAL

    return pair_table(cells, pair, diagonal, columns=KAPPA_COLUMNS)
