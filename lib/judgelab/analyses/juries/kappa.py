"""Cohen's kappa between every two judges of a pool on their consolidated labels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.analyses.juries.pairs import (
    PairCell,
    judge_column,
    pair_bootstrap,
    pair_cells,
    pair_table,
)
from judgelab.analyses.juries.ratings import RATING_CODES, ratings
from judgelab.core import stats

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
) -> pd.DataFrame:
    """Return Cohen's kappa between every two judges of a pool on their consolidated labels.

    Kappa = (p_o − p_e) / (1 − p_e) over the items both judges rated (labels pos/neg/tie);
    the interval is a cluster bootstrap over those items (their `cluster`, else the item;
    pooled rows: stratified by split, over splits rated by the same judges).

    Args:
        judgments: A judgments table (see `ratings`).
        pool: Column whose values define separate pools of judges (None: one pool).
        across: Add `pooled` rows over the splits, or None.
        pool_strata: `same_judges` (default: pooled rows only over splits rated by the same
            judges, one per judge set) or `all` (legacy: every split).
        cluster: Resampling unit: `cluster` (default: the items' cluster, else the item),
            `item`, or None (units on their own: legacy).
        n_boot: Bootstrap resamples B.
        seed: Seed of the bootstrap.
        level: Confidence level.

    Returns:
        `pool`, `benchmark`, `split`, `judge_1`, `judge_2` (both orders, diagonal = 1),
        `kappa`, `ci_low`, `ci_high`, `agreement` (p_o), `n` (items both rated).
    """
    cells = pair_cells(
        ratings(judgments, units="item", pool=pool),
        across=across,
        cluster=cluster,
        pool_strata=pool_strata,
    )

    def pair(cell: PairCell, j1: str, j2: str) -> dict:
        conf, reps = pair_bootstrap(
            cell, j1, j2, seed=seed, n_boot=n_boot, n_values=len(RATING_CODES)
        )
        n = int(conf.sum())
        kappa = stats.interval_fields(
            stats.kappa_from_confusion(conf),
            stats.kappa_from_confusion(reps),
            level=level,
            names=("kappa", "ci_low", "ci_high"),
        )
        return kappa | {"agreement": float(np.trace(conf) / n) if n else np.nan, "n": n}

    def diagonal(cell: PairCell, judge: str) -> dict:
        n = int(judge_column(cell.strata, judge).notna().sum())
        return {"kappa": 1.0, "ci_low": 1.0, "ci_high": 1.0, "agreement": 1.0, "n": n}

    return pair_table(cells, pair, diagonal, columns=KAPPA_COLUMNS)
